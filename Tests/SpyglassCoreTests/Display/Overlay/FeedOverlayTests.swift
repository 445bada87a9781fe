import Testing
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession

/// The live overlay's lines: measured rates, glass-to-glass against the target in the right
/// colour with its source, and never a figure that was not measured.
@Suite struct FeedOverlayTests {
    /// A registry after one second of a 30 fps feed with glass-to-glass around `g2gMillis`.
    private func oneSecond(g2gMillis: Double?, lost: Int = 0, source: String = "sei") -> FeedOverlay.Inputs {
        let m = MetricsRegistry()
        let before = m.snapshot()
        m.add(.accessUnits, 30); m.add(.framesDecoded, 30); m.add(.framesShown, 29)
        m.add(.bytes, 500_000); m.add(.packetsLost, lost)
        m.setFormat(codec: "H.264", format: "H.264 1280x720")
        for k in 0..<29 {
            m.observe(.receiverAdded, micros: 800 + UInt64(k))
            m.observe(.decode, micros: 600)
            if let g = g2gMillis { m.observe(.glassToGlass, micros: UInt64(g * 1000)) }
            m.noteShown(atMicros: 1_000_000 + UInt64(k) * 33_000, completion: "marker")
        }
        if g2gMillis != nil { m.setCaptureSource(source) }
        let after = m.snapshot()
        return FeedOverlay.Inputs(snapshot: after, rates: FeedRates(from: before, to: after, seconds: 1), frameAgeMillis: 12)
    }

    @Test func ratesAreMeasuredOverTheLastSecond() {
        let lines = FeedOverlay.lines(oneSecond(g2gMillis: 40), compact: false).map(\.text)
        #expect(lines.contains("30.0 fps in · 30.0 decoded · 29.0 shown · 4.0 Mb/s"), "\(lines)")
        #expect(lines.contains { $0.hasPrefix("frame age 12 ms · ended by marker 100 %") }, "\(lines)")
    }

    @Test(arguments: [(40.0, OverlayLine.Tone.good), (120.0, .warning), (200.0, .bad)])
    func glassToGlassIsColouredAgainstTheTarget(millis: Double, tone: OverlayLine.Tone) throws {
        let line = try #require(FeedOverlay.lines(oneSecond(g2gMillis: millis), compact: false).first { $0.text.hasPrefix("glass-to-glass") })
        #expect(line.tone == tone, "\(line)")
        #expect(line.text.hasSuffix("· SEI"), "the capture time's source: \(line.text)")
    }

    /// An RTCP sender report stamps the picture after encoding: the figure is a lower bound, and
    /// the overlay and the wall's compact form say so.
    @Test func glassToGlassFromRTCPIsShownAsALowerBound() throws {
        let full = try #require(FeedOverlay.lines(oneSecond(g2gMillis: 40, source: "rtcp"), compact: false).first { $0.text.hasPrefix("glass-to-glass") })
        #expect(full.text == "glass-to-glass p50 ≥39.5 p99 ≥40.0 ms · target 100 · RTCP (stamped after encoding: a lower bound)", "\(full.text)")
        let compact = try #require(FeedOverlay.lines(oneSecond(g2gMillis: 40, source: "rtcp"), compact: true).first { $0.text.hasPrefix("g2g") })
        #expect(compact.text == "g2g ≥40/40 ms (RTCP)")
        let sei = try #require(FeedOverlay.lines(oneSecond(g2gMillis: 40), compact: true).first { $0.text.hasPrefix("g2g") })
        #expect(sei.text == "g2g 40/40 ms (SEI)", "a stamp taken at capture is no bound")
    }

    /// After loss on RTP: how long the picture took to come clean again, and the keyframe
    /// requests sent; nothing on a clean feed.
    @Test func recoveryAfterLossIsShownOnlyOnceThereWasSome() throws {
        #expect(FeedOverlay.recoveryLine(MetricsRegistry().snapshot()) == nil)
        let m = MetricsRegistry()
        m.add(.keyframeRequestsLoss, 3)
        #expect(FeedOverlay.recoveryLine(m.snapshot())?.text == "not clean again yet · 3 keyframe requests")
        m.observe(.recovery, micros: 67_000)
        #expect(FeedOverlay.recoveryLine(m.snapshot())?.text == "clean again after damage: p50 67 ms (1 time) · 3 keyframe requests")
    }

    @Test func noCaptureTimeGivesNoFigure() throws {
        let line = try #require(FeedOverlay.lines(oneSecond(g2gMillis: nil), compact: false).first { $0.text.hasPrefix("glass-to-glass") })
        #expect(line.text == "glass-to-glass: none (no capture time in the stream)")
        #expect(line.tone == .plain)
    }

    /// A stalled feed that carried capture times says that no picture came, not that the
    /// stream has no capture time (an operator read it as a sender without stamps).
    @Test func aStalledFeedSaysNoPictureNotNoCaptureTime() throws {
        let m = MetricsRegistry()
        m.add(.framesShown, 100)
        m.setCaptureSource("sei")
        let s = m.snapshot()
        let stalled = FeedOverlay.Inputs(snapshot: s, rates: FeedRates(from: s, to: s, seconds: 1), frameAgeMillis: 4_600)
        let line = try #require(FeedOverlay.lines(stalled, compact: false).first { $0.text.hasPrefix("glass-to-glass") })
        #expect(line.text == "glass-to-glass: none (no picture shown in the last second)")
    }

    @Test func theCompactFormIsThreeLinesWithLossInAmber() {
        let lines = FeedOverlay.lines(oneSecond(g2gMillis: 40, lost: 3), compact: true)
        #expect(lines.count == 3)
        #expect(lines[0].text == "29 fps · 4.0 Mb/s · age 12 ms")
        #expect(lines[1].text.hasPrefix("g2g 40/40 ms") || lines[1].text.hasPrefix("g2g 39/40 ms") || lines[1].text.hasPrefix("g2g 40/41 ms"), "\(lines[1])")
        #expect(lines[2] == OverlayLine("loss 3 · damaged 0 (last second)", .warning))
    }

    @Test func theHistoryKeepsTenSecondsAndItsGaps() {
        var h = GlassToGlassHistory()
        for s in 0..<12 { h.append(s == 11 ? nil : Double(s)) }
        #expect(h.values.count == 10)
        #expect(h.values.first == 2 && h.values.last == .some(nil))
        #expect(h.scaleTop(targetMillis: 100) == 150)
    }
}
