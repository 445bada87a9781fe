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

    /// A sender that never answers is said so once, after 10 requests (2 s), and asked on.
    @Test func aSenderThatNeverAnswersIsSaidSoOnce() {
        var k = KeyframeRequester()
        k.request(.loss, nowMicros: 0)
        var notices = 0, sent = 0
        for t in stride(from: UInt64(0), to: 5_000_000, by: 200_000) {
            if k.pliIfDue(senderSSRC: 1, mediaSSRC: 2, nowMicros: t) != nil { sent += 1 }
            if k.takeSilentSenderNotice() {
                notices += 1
                #expect(sent == KeyframeRequester.unansweredBeforeNotice, "after 10 unanswered requests")
            }
        }
        #expect(notices == 1 && sent == 25, "said once; still asking at the capped rate")
        var answered = KeyframeRequester()
        for t in stride(from: UInt64(0), to: 5_000_000, by: 200_000) {
            answered.request(.loss, nowMicros: t)
            _ = answered.pliIfDue(senderSSRC: 1, mediaSSRC: 2, nowMicros: t)
            if t % 1_000_000 == 0 { answered.answerArrivedDamaged() }   // an IDR comes back now and then
            let said = answered.takeSilentSenderNotice()
            #expect(!said, "answered now and then: never said")
        }
    }

    /// An SDP that offers `ccm fir` for the video (RFC 5104 §7.1) gets FIRs from the first
    /// request; one that offers it for another payload type, or not at all, PLIs first.
    @Test func anSDPOfferingCCMFIRGetsFIRsFromTheFirstRequest() {
        let head = "v=0\r\nm=video 5004 RTP/AVP 96\r\na=rtpmap:96 H264/90000\r\n"
        #expect(SessionDescription(text: head + "a=rtcp-fb:96 nack pli\r\na=rtcp-fb:96 ccm fir\r\n").offersFIR)
        #expect(SessionDescription(text: head + "a=rtcp-fb:* ccm fir\r\n").offersFIR)
        #expect(!SessionDescription(text: head + "a=rtcp-fb:97 ccm fir\r\n").offersFIR)
        #expect(!SessionDescription(text: head + "a=rtcp-fb:96 nack pli\r\n").offersFIR)
        var session = RTCPSession(ssrc: 7)
        session.requestsFIRFirst = true
        let rtp: [UInt8] = [0x80, 96, 0, 1, 0, 0, 0, 0, 0, 0, 0, 9] + [UInt8](repeating: 0, count: 20)
        rtp.withUnsafeBytes { session.observeRTP($0, arrivalMicros: 2_000) }
        session.requestKeyframe(.loss, nowMicros: 2_000)
        let bytes = session.outgoing(nowMicros: 2_000)?.bytes ?? []
        #expect(Array(bytes.suffix(20)) == KeyframeRequester.fir(senderSSRC: 7, mediaSSRC: 9, sequence: 0), "a FIR, not a PLI")
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
