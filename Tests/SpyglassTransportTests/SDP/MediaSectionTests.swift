import Testing
import SpyglassBitstream
@testable import SpyglassTransport

/// ``MediaSection``: an RTSP server's DESCRIBE answer split into its tracks (RFC 8866 §5.14).
@Suite struct MediaSectionTests {
    /// A camera's answer: session lines, an audio track, the video track, an ONVIF metadata track.
    static let describe = """
        v=0\r
        o=- 1 1 IN IP4 10.0.0.7\r
        a=control:*\r
        m=audio 0 RTP/AVP 97\r
        a=rtpmap:97 MPEG4-GENERIC/16000/1\r
        a=control:trackID=1\r
        m=video 0 RTP/AVP 96\r
        a=rtpmap:96 H264/90000\r
        a=fmtp:96 packetization-mode=1;sprop-parameter-sets=Z0LAHtkDxWhAAAADAEAAAAwDxYuS,aMuMsg==\r
        a=control:rtsp://10.0.0.7/main/trackID=2\r
        m=application 0 RTP/AVP 107\r
        a=rtpmap:107 vnd.onvif.metadata/90000\r
        """

    @Test func eachTrackIsASectionWithItsEncodingAndControl() {
        let sections = MediaSection.sections(in: Self.describe)
        #expect(sections.map(\.media) == ["audio", "video", "application"])
        #expect(sections.map(\.encodingName) == ["MPEG4-GENERIC", "H264", "vnd.onvif.metadata"])
        #expect(sections.map(\.control) == ["trackID=1", "rtsp://10.0.0.7/main/trackID=2", nil],
                "the session-level a=control:* belongs to no track")
        let video = sections[1].description
        #expect(video.codec == .h264 && video.payloadType == 96 && video.parameterSets.count == 2)
        #expect(sections[0].description.codec == nil, "audio names no video codec")
    }

    @Test func textWithoutMediaHasNoSection() {
        #expect(MediaSection.sections(in: "v=0\no=- 1 1 IN IP4 1.2.3.4\n").isEmpty)
    }
}
