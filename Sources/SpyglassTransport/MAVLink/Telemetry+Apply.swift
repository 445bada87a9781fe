extension Telemetry {
    /// Applies one frame that arrived at `arrivalMicros` (monotonic µs): locks onto a vehicle,
    /// counts, and updates the fields its message carries (see ``Telemetry``).
    public mutating func apply(_ frame: MAVLinkFrame, arrivalMicros t: UInt64) {
        let message = MAVLinkMessage(frame)
        if case .heartbeat(let hb)? = message { lock(frame, hb) }
        guard let vehicle = systemID else {
            framesBeforeLock += 1
            return
        }
        // RADIO_STATUS describes the link (SiK radios send it as their own system, 51), unless it
        // comes from another flight controller.
        let linkReport = frame.messageID == MAVLinkMessage.ID.radioStatus && !autopilotSystems.contains(frame.systemID)
        guard frame.systemID == vehicle || linkReport else {
            otherVehicleFrames += 1
            return
        }
        lastMessageMicros = t
        var stats = messageStats[frame.messageID] ?? MessageStats(count: 0, firstMicros: t, lastMicros: t)
        stats.count += 1
        stats.lastMicros = t
        messageStats[frame.messageID] = stats
        if let message { update(message, from: frame, at: t) }
    }

    /// Locks onto the first flight controller's HEARTBEAT; within the locked system, an
    /// autopilot heartbeat from component 1 takes the component over.
    private mutating func lock(_ frame: MAVLinkFrame, _ hb: MAVLinkMessage.Heartbeat) {
        guard hb.type != MAVLinkMessage.Heartbeat.typeGCS, hb.autopilot != MAVLinkMessage.Heartbeat.autopilotInvalid else { return }
        if autopilotSystems.count < 256 { autopilotSystems.insert(frame.systemID) }
        if systemID == nil {
            systemID = frame.systemID
            componentID = frame.componentID
        } else if frame.systemID == systemID, frame.componentID == 1 {
            componentID = 1
        }
    }

    private mutating func update(_ message: MAVLinkMessage, from frame: MAVLinkFrame, at t: UInt64) {
        switch message {
        case .heartbeat(let hb) where frame.componentID == componentID: take(hb, at: t)
        case .heartbeat: break
        case .sysStatus(let s):
            if let v = s.batteryVolts { set(\.batteryVolts, v, 0...1000, at: t) }
            if let r = s.batteryRemainingPercent { set(\.batteryRemaining, Double(r) / 100, 0...1, at: t) }
            set(\.linkQuality, 1 - s.dropRateCommPercent / 100, 0...1, at: t)
        case .batteryStatus(let b) where b.id == 0:
            if let v = b.totalVolts { set(\.batteryVolts, v, 0...1000, at: t) }
            if let r = b.remainingPercent { set(\.batteryRemaining, Double(r) / 100, 0...1, at: t) }
        case .batteryStatus: break
        case .gpsRawInt(let g):
            gpsFixType = Stamped(g.fixType, at: t)
            if let n = g.satellitesVisible { satellites = Stamped(n, at: t) }
        case .attitude(let a):
            set(\.roll, a.roll, -Double.pi...Double.pi, at: t)
            set(\.pitch, a.pitch, -Double.pi...Double.pi, at: t)
        case .globalPositionInt(let g):
            if let p = plausible(g.latitude, g.longitude, g.altitudeMSL) { position = Stamped(p, at: t) }
            set(\.altitudeAboveHome, g.relativeAltitude, -100_000...100_000, at: t)
        case .vfrHUD(let h):
            set(\.groundSpeed, h.groundSpeed, 0...10_000, at: t)
            set(\.climb, h.climb, -10_000...10_000, at: t)
            set(\.heading, Double(h.heading), 0...360, at: t)
        case .radioStatus(let r):
            if let v = r.rssi { rssi = Stamped(v, at: t) }
            if let v = r.remoteRSSI { remoteRSSI = Stamped(v, at: t) }
        case .homePosition(let h):
            if let p = plausible(h.latitude, h.longitude, h.altitudeMSL) { home = Stamped(p, at: t) }
        case .statusText(let s):
            statusText = Stamped(s, at: t)
        }
    }

    /// Sets `field` to `value` when it is finite and within `range`; otherwise counts it in
    /// ``implausibleValues`` and keeps the field as it was.
    private mutating func set(_ field: WritableKeyPath<Telemetry, Stamped<Double>?>, _ value: Double, _ range: ClosedRange<Double>, at t: UInt64) {
        guard value.isFinite, range.contains(value) else { implausibleValues += 1; return }
        self[keyPath: field] = Stamped(value, at: t)
    }

    /// A WGS-84 point when latitude (±90°), longitude (±180°) and altitude are possible.
    private mutating func plausible(_ lat: Double, _ lon: Double, _ alt: Double?) -> GeoPoint? {
        guard lat.isFinite, lon.isFinite, abs(lat) <= 90, abs(lon) <= 180, alt.map({ $0.isFinite && abs($0) < 1_000_000 }) ?? true else {
            implausibleValues += 1
            return nil
        }
        return GeoPoint(latitude: lat, longitude: lon, altitudeMSL: alt)
    }

    /// The locked component's HEARTBEAT: armed, type, autopilot, mode, flight time.
    private mutating func take(_ hb: MAVLinkMessage.Heartbeat, at t: UInt64) {
        armed = Stamped(hb.armed, at: t)
        vehicleType = Stamped(hb.type, at: t)
        autopilot = Stamped(hb.autopilot, at: t)
        modeName = Stamped(hb.modeName, at: t)
        if hb.armed {
            if firstArmedMicros == nil { firstArmedMicros = t }
            lastArmedMicros = t
        }
    }
}
