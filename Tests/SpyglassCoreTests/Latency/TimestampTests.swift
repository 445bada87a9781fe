import Foundation
import Testing
import CFFmpeg
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession
@testable import SpyglassBitstream
@testable import SpyglassPipeline

/// The ST 0604 SEI and the pixel time code, written and read back.
@Suite struct TimestampTests {
    @Test func seiRoundTripIncludingValuesThatNeedEmulationPrevention() {
        let values: [UInt64] = [0, 1, 0x0000_0300_0000_0001, 0x0000_0000_0001_0000, 1_764_000_000_123_456, UInt64.max]
        for codec in VideoCodec.allCases {
            for v in values {
                let nal = PrecisionTimestampSEI.nalUnit(micros: v, codec: codec)
                for i in 0..<(nal.count - 2) {
                    #expect(!(nal[i] == 0 && nal[i + 1] == 0 && nal[i + 2] <= 3), "start code emulation in \(nal)")
                }
                #expect(PrecisionTimestampSEI.read(seiNALUnit: nal, codec: codec) == v, "\(codec) \(v)")
                // Through the Annex B scanner, as a receiver sees it.
                var s = AnnexBScanner()
                var units: [[UInt8]] = []
                s.push([0, 0, 0, 1] + nal + [0, 0, 1, 0x09, 0xF0], arrivalMicros: 0) { units.append($0.bytes) }
                #expect(units.first == nal)
            }
        }
    }

    @Test func seiPayloadHasTheST0604Layout() {
        let p = PrecisionTimestampSEI.payload(micros: 0x0102_0304_0506_0708, codec: .h264)
        #expect(p.count == 28)
        #expect(Array(p[0..<16]) == Array("MISPmicrosectime".utf8))
        #expect(Array(p[17...]) == [1, 2, 0xFF, 3, 4, 0xFF, 5, 6, 0xFF, 7, 8])
    }

    @Test func seiAmongOtherMessagesAndMalformedSEI() {
        // An SEI NAL with a recovery point message (type 6) first, then our time stamp.
        let payload = PrecisionTimestampSEI.payload(micros: 42, codec: .h264)
        let rbsp: [UInt8] = [6, 1, 0x84] + [5, 28] + payload + [0x80]
        #expect(PrecisionTimestampSEI.read(seiNALUnit: [0x06] + RBSP.escape(rbsp), codec: .h264) == 42)
        // Claimed size past the end: no value, no crash.
        #expect(PrecisionTimestampSEI.read(seiNALUnit: [0x06, 5, 200, 1, 2, 3], codec: .h264) == nil)
        #expect(PrecisionTimestampSEI.read(seiNALUnit: [0x06, 0xFF, 0xFF, 0xFF], codec: .h264) == nil)
    }

    @Test func timeCodeRejectsAHalfUpdatedCode() {
        let old: UInt64 = 1_764_000_000_000_000
        #expect(TimeCode.value(from: TimeCode.bits(for: old)) == old)
        // Every tear point between an old and a new code reads as nil, the old or the new value:
        // never as a third value.
        for new in [old + 33_333, old + (1 << 40) + 33_333] {
            let a = TimeCode.bits(for: old), b = TimeCode.bits(for: new)
            var rejected = 0
            for cut in 1..<a.count {
                let torn = Array(a[0..<cut] + b[cut...])
                let v = TimeCode.value(from: torn)
                #expect(v == nil || v == old || v == new, "cut \(cut) read \(String(describing: v))")
                if v == nil { rejected += 1 }
            }
            #expect(rejected > 0)
        }
        // Top row old and bottom row new, where both rows changed: rejected.
        let a = TimeCode.bits(for: old), b = TimeCode.bits(for: old + (1 << 40) + 33_333)
        #expect(TimeCode.value(from: Array(a[0..<44] + b[44...])) == nil)
    }

    /// Encode the pattern at a low bitrate, decode it, read the code from the decoded luma.
    /// With `veryfast` every code reads back exactly. With `ultrafast` at this starved rate the
    /// encoder may skip the code's macroblocks of a frame (one strip keeps the last frame's code),
    /// so there the property is the observer's: where top and bottom agree, the code is exact.
    @Test func timeCodeSurvivesLowBitrateCompression() throws {
        for codec in VideoCodec.allCases {
            try checkTimeCodeAtLowBitrate(codec: codec, preset: "veryfast", strict: true)
            try checkTimeCodeAtLowBitrate(codec: codec, preset: "ultrafast", strict: false)
        }
    }

    private func checkTimeCodeAtLowBitrate(codec: VideoCodec, preset: String, strict: Bool) throws {
        do {
            var settings = VideoEncoder.Settings()
            settings.codec = codec
            settings.width = 640; settings.height = 360
            settings.bitrate = 150_000
            settings.preset = preset
            let encoder = try VideoEncoder(settings: settings)
            let decoder = try VideoDecoder(codec: codec)
            let pattern = TestPattern(width: 640, height: 360)
            var sent: [UInt64] = []
            var read: [UInt64?] = []
            var bottoms: [UInt64?] = []
            for i in 0..<40 {
                let t = 1_764_000_000_000_000 + UInt64(i) * 33_333
                sent.append(t)
                encoder.prepareFrame()
                let f = encoder.frame
                pattern.draw(index: i, captureMicros: t, y: f.pointee.data.0!, yStride: Int(f.pointee.linesize.0),
                             u: f.pointee.data.1!, uStride: Int(f.pointee.linesize.1),
                             v: f.pointee.data.2!, vStride: Int(f.pointee.linesize.2))
                for packet in try encoder.encode(pts: Int64(i)) {
                    var scanner = AnnexBScanner()
                    var asm = AccessUnitAssembler(codec: codec)
                    var aus: [AccessUnit] = []
                    scanner.push(packet, arrivalMicros: 0) { if let au = asm.push($0) { aus.append(au) } }
                    scanner.flush(atMicros: 0, reason: .endOfStream) { if let au = asm.push($0) { aus.append(au) } }
                    if let au = asm.flush(atMicros: 0, reason: .endOfStream) { aus.append(au) }
                    for var au in aus {
                        au.index = i
                        decoder.decode(au) { frame in
                            let y = frame.frame.pointee.data.0!
                            let stride = Int(frame.frame.pointee.linesize.0)
                            let top = TimeCode.read(x: 0, y: 0, width: frame.width) { Int(y[$1 * stride + $0]) }
                            read.append(top)
                            // The same code at the bottom, read the way --clock reads a camera's picture.
                            bottoms.append(frame.readTimeCode(y: frame.height - TimeCode.stripHeight(width: frame.width)))
                        }
                    }
                }
            }
            #expect(read.count == sent.count, "\(codec) \(preset): one picture per frame, none held back")
            if strict {
                #expect(read.compactMap { $0 } == Array(sent.prefix(read.count)),
                        "\(codec) \(preset): every code read back exactly")
                #expect(bottoms.compactMap { $0 } == Array(sent.prefix(bottoms.count)),
                        "\(codec) \(preset): bottom codes too")
                #expect(bottoms.compactMap { $0 }.count > sent.count * 9 / 10)
            } else {
                var agreed = 0
                for i in 0..<min(read.count, sent.count) {
                    guard let top = read[i], let bottom = bottoms[i], top == bottom else { continue }
                    agreed += 1
                    #expect(top == sent[i], "\(codec) \(preset): frame \(i): an agreed code is the frame's own")
                }
                #expect(agreed > sent.count * 3 / 4, "\(codec) \(preset): most frames readable")
            }
        }
    }
}
