import Testing
@testable import SpyglassTransport

/// When keyframe requests go out (RFC 4585 §3.5, §6.3.1), on an injected clock.
@Suite struct KeyframeRequesterTests {
    @Test func aFIRNamesItsTargetAndSequence() {
        #expect(KeyframeRequester.fir(senderSSRC: 0x0102_0304, mediaSSRC: 0xA0B0_C0D0, sequence: 7)
                == [0x84, 206, 0, 4, 1, 2, 3, 4, 0, 0, 0, 0, 0xA0, 0xB0, 0xC0, 0xD0, 7, 0, 0, 0])
    }

    @Test func aPLINamesBothSSRCs() {
        #expect(KeyframeRequester.pli(senderSSRC: 0x0102_0304, mediaSSRC: 0xA0B0_C0D0)
                == [0x81, 206, 0, 2, 1, 2, 3, 4, 0xA0, 0xB0, 0xC0, 0xD0])
    }

    @Test func nothingIsAskedWhileThePictureIsClean() {
        var k = KeyframeRequester()
        #expect(k.pliIfDue(senderSSRC: 1, mediaSSRC: 2, nowMicros: 1_000_000) == nil)
        #expect(k.randomAccessArrived(nowMicros: 1_000_000) == nil, "no recovery without damage")
    }

    @Test func itRepeatsEvery200msUntilARandomAccessPointAndSaysHowLongItTook() {
        var k = KeyframeRequester()
        k.request(.loss, nowMicros: 1_000_000)
        k.request(.join, nowMicros: 1_050_000)   // the first reason and time stay
        var sentAt: [UInt64] = []
        for t in stride(from: UInt64(1_000_000), to: 2_000_000, by: 10_000) where k.pliIfDue(senderSSRC: 1, mediaSSRC: 2, nowMicros: t) != nil {
            sentAt.append(t)
        }
        #expect(sentAt == [1_000_000, 1_200_000, 1_400_000, 1_600_000, 1_800_000], "every 200 ms: at most 5 a second")
        var kinds = KeyframeRequester()
        kinds.request(.loss, nowMicros: 0)
        let sent = (0..<4).compactMap { kinds.pliIfDue(senderSSRC: 1, mediaSSRC: 2, nowMicros: UInt64($0) * 200_000) }
        #expect(sent.map { $0[0] & 0x1F } == [1, 1, 4, 4], "two PLIs, then FIRs")
        #expect(sent[2] == KeyframeRequester.fir(senderSSRC: 1, mediaSSRC: 2, sequence: 0) && sent[3] == sent[2], "a repetition keeps its sequence number")
        _ = kinds.randomAccessArrived(nowMicros: 900_000)
        kinds.request(.loss, nowMicros: 1_000_000)
        let next = (0..<3).compactMap { kinds.pliIfDue(senderSSRC: 1, mediaSSRC: 2, nowMicros: 1_000_000 + UInt64($0) * 200_000) }
        #expect(next.last == KeyframeRequester.fir(senderSSRC: 1, mediaSSRC: 2, sequence: 1), "a new request: the next sequence number")
        #expect(k.made == [.loss: 5])
        #expect(k.randomAccessArrived(nowMicros: 1_930_000) == 930_000, "from the first damage")
        #expect(k.pliIfDue(senderSSRC: 1, mediaSSRC: 2, nowMicros: 3_000_000) == nil, "clean: no more")
    }

    /// The answer came damaged (the same loss hit the IDR): the round trip is over, so the next
    /// request may go at once, still within 5 a second.
    @Test func aDamagedAnswerLetsTheNextRequestGoAtOnce() {
        var k = KeyframeRequester()
        k.answerArrivedDamaged()
        #expect(k.pendingReason == nil, "nothing pending: nothing to ask again")
        k.request(.loss, nowMicros: 0)
        #expect(k.pliIfDue(senderSSRC: 1, mediaSSRC: 2, nowMicros: 0) != nil)
        #expect(k.pliIfDue(senderSSRC: 1, mediaSSRC: 2, nowMicros: 33_000) == nil, "200 ms between requests")
        k.answerArrivedDamaged()
        #expect(k.pliIfDue(senderSSRC: 1, mediaSSRC: 2, nowMicros: 33_000) != nil, "at once after a damaged answer")
        for t in [66_000, 99_000, 132_000] as [UInt64] {
            k.answerArrivedDamaged()
            _ = k.pliIfDue(senderSSRC: 1, mediaSSRC: 2, nowMicros: t)
        }
        k.answerArrivedDamaged()
        #expect(k.pliIfDue(senderSSRC: 1, mediaSSRC: 2, nowMicros: 165_000) == nil, "never more than 5 a second")
        #expect(k.made == [.loss: 5])
    }

    @Test func theSessionSendsItAfterAReceiverReportOnceTheStreamIsKnown() {
        var session = RTCPSession(ssrc: 7)
        session.requestKeyframe(.loss, nowMicros: 1_000)
        #expect(session.outgoing(nowMicros: 1_000) == nil, "no RTP yet: no media SSRC to name")
        let rtp: [UInt8] = [0x80, 96, 0, 1, 0, 0, 0, 0, 0, 0, 0, 9] + [UInt8](repeating: 0, count: 20)
        rtp.withUnsafeBytes { session.observeRTP($0, arrivalMicros: 2_000) }
        let out = session.outgoing(nowMicros: 2_000)
        #expect(out?.keyframeRequest == .loss)
        let bytes = out?.bytes ?? []
        #expect(bytes.count > 12 && bytes[1] == 201 && Array(bytes.suffix(12)) == KeyframeRequester.pli(senderSSRC: 7, mediaSSRC: 9),
                "RR first, PLI last (RFC 4585 §3.5.3)")
        var off = RTCPSession(ssrc: 7)
        off.requestsKeyframes = false
        rtp.withUnsafeBytes { off.observeRTP($0, arrivalMicros: 2_000) }
        off.requestKeyframe(.loss, nowMicros: 2_000)
        #expect(off.outgoing(nowMicros: 2_000)?.keyframeRequest == nil, "--keyframe-requests off")
    }
}
