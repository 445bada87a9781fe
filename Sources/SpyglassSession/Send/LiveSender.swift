import Foundation
import CFFmpeg
import SpyglassBitstream
import SpyglassTransport
import SpyglassPipeline
import SpyglassIngest
import SpyglassDisplay

/// `spyglass send`: streams the live test pattern (encoded now) or a capture file at real-time
/// pace, each access unit stamped with its capture instant in an ST 0604 SEI.
///
/// Used from one thread; only ``stop`` is shared (it is ``Sendable``).
public final class LiveSender {
    /// What to send.
    public enum Input: Sendable {
        /// The moving test pattern, encoded live with these settings.
        case pattern(VideoEncoder.Settings)
        /// An Annex B file sent access unit by access unit at `fps` frames per second (nil: the
        /// SPS's VUI timing, else 30), from the start again when it ends if `loop`.
        case file(path: String, fps: Double?, loop: Bool)

        /// True for the live test pattern (encoded here), false for a file sent as is.
        public var isPattern: Bool { if case .pattern = self { return true } else { return false } }
    }

    /// What is sent.
    public let input: Input
    /// Where it goes: the UDP or TCP destination.
    public let sender: StreamSender
    /// Stamps (and the drawn time code) run this far ahead of the wall clock, µs (negative:
    /// behind): a drone whose clock is not the ground station's, for tests.
    public var clockOffsetMicros: Int64 = 0
    /// Add our precision time stamp SEI to a file's access units (a pattern is always stamped).
    public var stamp = false
    /// Stop after this many seconds (nil = until the input ends or ``stop`` is set).
    public var durationSeconds: Double?
    /// Set it from any thread to end ``run()`` before the next access unit.
    public let stop = StopFlag()
    /// Access units sent.
    public private(set) var accessUnitsSent = 0
    /// Pattern frames encoded (0 for a file).
    public private(set) var framesEncoded = 0
    /// Total encode time of all pattern frames so far, ms (0 for a file); ``encodeMillisMean``
    /// is the mean per frame.
    public private(set) var encodeMillisTotal = 0.0
    /// Mean encode time per pattern frame, ms: ``encodeMillisTotal`` / ``framesEncoded``
    /// (0 before the first frame).
    public var encodeMillisMean: Double {
        framesEncoded > 0 ? encodeMillisTotal / Double(framesEncoded) : 0
    }
    /// Packetize as RTP (RFC 6184 / RFC 7798) instead of raw Annex B (UDP only).
    /// Wrap access units in MPEG-TS (``MPEGTSMuxer``): 7 packets a datagram over UDP.
    public var mpegts = false
    /// With ``mpegts``: a MISB ST 0601 local set before each access unit, with this position and
    /// the capture instant as its Precision Time Stamp (tag 2), as STANAG 4609 drones send.
    public var klv: PlatformMetadata?
    private var muxer: MPEGTSMuxer?
    public var rtp = false
    private var packetizer: RTPPacketizer?
    /// `--rtp` over UDP: sender reports, and the keyframe requests heard.
    private lazy var rtcp: SenderRTCP? = rtp ? sender.datagramDestination.flatMap { [sender] in
        SenderRTCP(rtpDestination: $0, bindRTP: { sender.bindLocalPort($0) })
    } : nil

    /// A sender of `input` to `sender`; nothing is sent before ``run()``.
    public init(input: Input, sender: StreamSender) {
        self.input = input
        self.sender = sender
    }

    /// Runs until the duration, the end of the file, or ``stop``.
    /// - Throws: ``VideoEncoder/EncoderError`` or ``SourceError``.
    public func run() throws {
        switch input {
        case .pattern(let settings): try runPattern(settings)
        case .file(let path, let fps, let loop): try runFile(path, fps: fps, loop: loop)
        }
    }

    private func runPattern(_ settings: VideoEncoder.Settings) throws {
        let encoder = try VideoEncoder(settings: settings)
        let pattern = TestPattern(width: settings.width, height: settings.height)
        let period = 1_000_000 / UInt64(max(1, settings.fps))
        var start = MonotonicClock.nowMicros()
        var index = 0
        while !stop.isSet {
            let due = start + UInt64(index) * period
            if let d = durationSeconds, Double(due - start) / 1e6 >= d { break }
            if let rtcp { rtcp.wait(untilMicros: due) } else { MonotonicClock.sleep(untilMicros: due) }
            guard let waited = try awaitReceiver() else { return }
            if waited { start = MonotonicClock.nowMicros() - UInt64(index) * period }
            let capture = UInt64(max(0, Int64(bitPattern: MonotonicClock.wallMicros()) + clockOffsetMicros))
            if rtcp?.keyframeWanted(nowMicros: MonotonicClock.nowMicros(), wallMicros: MonotonicClock.wallMicros()) == true {
                encoder.forceKeyframe()
            }
            encoder.prepareFrame()
            let f = encoder.frame
            pattern.draw(index: index, captureMicros: capture,
                         y: f.pointee.data.0!, yStride: Int(f.pointee.linesize.0),
                         u: f.pointee.data.1!, uStride: Int(f.pointee.linesize.1),
                         v: f.pointee.data.2!, vStride: Int(f.pointee.linesize.2))
            let t0 = MonotonicClock.nowMicros()
            let packets = try encoder.encode(pts: Int64(index))
            encodeMillisTotal += Double(MonotonicClock.nowMicros() - t0) / 1000
            framesEncoded += 1
            for p in packets {
                transmit(Self.stamped(p, codec: settings.codec, captureMicros: capture), codec: settings.codec, captureMicros: capture)
                accessUnitsSent += 1
            }
            if let rtcp, let p = packetizer {
                rtcp.reportIfDue(ssrc: p.ssrc, packets: sender.datagramsSent, octets: max(0, sender.bytesSent - 12 * sender.datagramsSent),
                                 nowMicros: MonotonicClock.nowMicros(), wallMicros: MonotonicClock.wallMicros())
            }
            index += 1
        }
    }

    private func runFile(_ path: String, fps: Double?, loop: Bool) throws {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let (codec, aus, asm) = AccessUnitAssembler.accessUnits(ofAnnexB: bytes)
        guard !aus.isEmpty else { throw SourceError.open("\(path): no H.264/H.265 video found") }
        let rate = fps ?? asm.parameterSets.latestFormat?.frameRate ?? 30
        let period = UInt64(1_000_000 / max(1, rate))
        var start = MonotonicClock.nowMicros()
        var k = 0
        repeat {
            for au in aus {
                if stop.isSet { return }
                let due = start + UInt64(k) * period
                if let d = durationSeconds, Double(due - start) / 1e6 >= d { return }
                MonotonicClock.sleep(untilMicros: due)
                guard let waited = try awaitReceiver() else { return }
                if waited { start = MonotonicClock.nowMicros() - UInt64(k) * period }
                let capture = UInt64(max(0, Int64(bitPattern: MonotonicClock.wallMicros()) + clockOffsetMicros))
                var out = au.annexB()
                if stamp { out = Self.stamped(out, codec: codec, captureMicros: capture) }
                transmit(out, codec: codec, captureMicros: capture)
                accessUnitsSent += 1
                k += 1
            }
        } while loop
    }

    /// Waits until the destination has a receiver (a TCP or SRT listener's first or next one).
    /// - Returns: whether it had to wait (then the schedule starts again from now: the frames not
    ///   sent while nobody listened are not sent in a burst), or nil when stopped.
    /// - Throws: ``SourceError/open(_:)`` when the receiver refused us for a reason calling again
    ///   cannot mend (an SRT passphrase that does not match).
    private func awaitReceiver() throws -> Bool? {
        var waited = false
        while !sender.waitForReceiver(timeoutMicros: 100_000) {
            if let why = sender.refusal { throw SourceError.open(why) }
            if stop.isSet { return nil }
            waited = true
        }
        return waited
    }

    private func transmit(_ annexB: [UInt8], codec: VideoCodec, captureMicros: UInt64) {
        if mpegts {
            if muxer == nil { muxer = MPEGTSMuxer(codec: codec, klv: klv != nil ? .asynchronous : .none) }
            var scanner = AnnexBScanner()
            var key = false
            scanner.push(annexB, arrivalMicros: 0) { key = key || NALUnitHeader(codec: codec, bytes: $0.bytes)?.isRandomAccessPoint == true }
            scanner.flush(atMicros: 0, reason: .endOfStream) { key = key || NALUnitHeader(codec: codec, bytes: $0.bytes)?.isRandomAccessPoint == true }
            let metadata = klv.map { m -> [UInt8] in
                var m = m
                m.precisionTimeMicros = captureMicros
                return UASLocalSet.encode(m)
            }
            let ts = muxer!.mux(annexB, pts90kHz: captureMicros * 9 / 100, keyframe: key, nowMicros: MonotonicClock.nowMicros(), klv: metadata)
            guard sender.isDatagram else { sender.send(ts); return }
            // 7 packets (1316 bytes) a datagram, as encoders send TS over UDP.
            sender.sendDatagrams(stride(from: 0, to: ts.count, by: 1316).map { Array(ts[$0..<min($0 + 1316, ts.count)]) })
            return
        }
        guard rtp && sender.isDatagram else { sender.send(annexB); return }
        if packetizer == nil {
            packetizer = RTPPacketizer(codec: codec, ssrc: UInt32.random(in: 1...UInt32.max),
                                       firstSequenceNumber: UInt16.random(in: 0...UInt16.max), mtu: sender.mtu)
        }
        var scanner = AnnexBScanner()
        var units: [[UInt8]] = []
        scanner.push(annexB, arrivalMicros: 0) { units.append($0.bytes) }
        scanner.flush(atMicros: 0, reason: .endOfStream) { units.append($0.bytes) }
        let ts = UInt32(truncatingIfNeeded: captureMicros * 9 / 100)   // 90 kHz
        sender.sendDatagrams(packetizer!.packetize(units, timestamp90kHz: ts))
    }

    /// Inserts an ST 0604 time stamp SEI before the first VCL unit of an Annex B access unit.
    public static func stamped(_ annexB: [UInt8], codec: VideoCodec, captureMicros: UInt64) -> [UInt8] {
        var scanner = AnnexBScanner()
        var units: [[UInt8]] = []
        scanner.push(annexB, arrivalMicros: 0) { units.append($0.bytes) }
        scanner.flush(atMicros: 0, reason: .endOfStream) { units.append($0.bytes) }
        let sei = PrecisionTimestampSEI.nalUnit(micros: captureMicros, codec: codec)
        var out: [UInt8] = []
        out.reserveCapacity(annexB.count + sei.count + 8)
        var inserted = false
        for u in units {
            if !inserted, let h = NALUnitHeader(codec: codec, bytes: u), h.isVCL {
                out += [0, 0, 0, 1]; out += sei
                inserted = true
            }
            out += [0, 0, 0, 1]; out += u
        }
        return out
    }
}

extension LiveSender {
    /// `send`'s closing line: what went out (access units; datagrams, SRT messages or writes;
    /// bytes, to all destinations together), the encoder's mean time per frame (pattern) and
    /// SRT's statistics.
    public func closingLine(_ sender: StreamSender, destination: SourceURL, pattern: Bool) -> String {
        let encode = pattern && framesEncoded > 0 ? String(format: "; encode mean %.2f ms per frame", encodeMillisMean) : ""
        let srt = sender.srtStatistics.map { String(format: "; SRT: RTT %.2f ms, %d retransmitted, %d dropped", $0.roundTripMillis, $0.packetsRetransmittedSent, $0.packetsDroppedSending) } ?? ""
        let unit = sender.isDatagram ? "datagrams" : destination.isSRT ? "messages" : "writes"
        let asked = rtcp.map { $0.requestsHeard > 0 ? "; \($0.requestsHeard) keyframe request\($0.requestsHeard == 1 ? "" : "s") heard, \($0.keyframesForced) IDR\($0.keyframesForced == 1 ? "" : "s") sent for them" : "" } ?? ""
        let each = sender.destinationCount > 1 ? " (to \(sender.destinationCount) destinations: every datagram to each)" : ""
        return "sent \(accessUnitsSent) access units, \(sender.datagramsSent) \(unit), \(sender.bytesSent) bytes\(each)\(encode)\(srt)\(asked)"
    }
}
