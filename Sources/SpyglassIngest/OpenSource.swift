/// Opens a ``ByteSource`` for a ``SourceURL``.
/// - Parameter retryFirstConnection: a source that connects by itself (RTSP, a TCP or SRT
///   caller) keeps trying when its sender is not there yet, instead of throwing: a wall's camera
///   that is down when the wall starts comes in when it is up.
/// - Throws: ``SourceError/open(_:)`` with a one-line message.
public func openSource(_ url: SourceURL, options: SourceOptions = SourceOptions(), retryFirstConnection: Bool = false) throws -> ByteSource {
    switch url {
    case .udp(let host, let port, let iface):
        let s = try UDPSource(host: host, port: port, receiveBufferBytes: options.udpReceiveBufferBytes,
                              multicastInterface: iface, allowFrom: options.allowFrom, bindRTCPAtOnce: options.rtpDeclared)
        let group = host.flatMap { AddressPrefix($0) }?.isMulticast ?? false
        Log.info("\(s.label): listening (port \(s.boundPort))\(group ? ", joined the multicast group" : ""), receive buffer \(s.grantedReceiveBufferBytes / 1024) KiB (the kernel reports twice the \(options.udpReceiveBufferBytes / 1024) KiB asked for: its bookkeeping)")
        return s
    case .tcpConnect(let host, let port):
        let s = try TCPSource(connectTo: host, port: port, retryFirstConnection: retryFirstConnection)
        if s.connectionProblem == nil { Log.info("\(s.label): connected") }
        return s
    case .tcpListen(let host, let port):
        let s = try TCPSource(listenOn: host, port: port, allowFrom: options.allowFrom)
        Log.info("\(s.label): waiting for a sender on port \(s.listeningPort)")
        return s
    case .file(let path):
        // A tcpdump/Wireshark capture is packets, not a stream: its UDP flow, as it arrived.
        if PcapSource.isPacketCapture(path) {
            let s = try PcapSource(path: path, speed: options.untimed ? 0 : 1)
            Log.info("\(path): a packet capture: playing its UDP flow \(s.flow.map { "\($0)" } ?? "") as recorded"
                     + " (spyglass replay FILE --port N picks another flow, --send re-emits it)")
            return s
        }
        return try StreamFDSource.file(path: path)
    case .stdin:
        return StreamFDSource.stdin()
    case .rtsp(let u):
        return try RTSPSource(url: u, transport: options.rtspTransport, retryFirstConnection: retryFirstConnection)
    case .selecting(let inner, _):
        return try openSource(inner, options: options, retryFirstConnection: retryFirstConnection)
    case .srt(let u):
        let s = try SRTSource(url: u, retryFirstConnection: retryFirstConnection)
        if u.mode == .listener { Log.info("\(s.label): waiting for a caller on port \(s.listeningPort)") }
        else if !retryFirstConnection { Log.info("\(s.label): connected") }
        return s
    }
}
