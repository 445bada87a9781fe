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
        guard frame.systemID == vehicle || frame.messageID == MAVLinkMessage.ID.radioStatus else {
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
            if let v = s.batteryVolts { batteryVolts = Stamped(v, at: t) }
            if let r = s.batteryRemainingPercent { batteryRemaining = Stamped(Double(r) / 100, at: t) }
            linkQuality = Stamped(max(0, min(1, 1 - s.dropRateCommPercent / 100)), at: t)
        case .batteryStatus(let b) where b.id == 0:
            if let v = b.totalVolts { batteryVolts = Stamped(v, at: t) }
            if let r = b.remainingPercent { batteryRemaining = Stamped(Double(r) / 100, at: t) }
        case .batteryStatus: break
        case .gpsRawInt(let g):
            gpsFixType = Stamped(g.fixType, at: t)
            if let n = g.satellitesVisible { satellites = Stamped(n, at: t) }
        case .attitude(let a):
            roll = Stamped(a.roll, at: t)
            pitch = Stamped(a.pitch, at: t)
        case .globalPositionInt(let g):
            position = Stamped(GeoPoint(latitude: g.latitude, longitude: g.longitude, altitudeMSL: g.altitudeMSL), at: t)
            altitudeAboveHome = Stamped(g.relativeAltitude, at: t)
        case .vfrHUD(let h):
            groundSpeed = Stamped(h.groundSpeed, at: t)
            climb = Stamped(h.climb, at: t)
            heading = Stamped(Double(h.heading), at: t)
        case .radioStatus(let r):
            if let v = r.rssi { rssi = Stamped(v, at: t) }
            if let v = r.remoteRSSI { remoteRSSI = Stamped(v, at: t) }
        case .homePosition(let h):
            home = Stamped(GeoPoint(latitude: h.latitude, longitude: h.longitude, altitudeMSL: h.altitudeMSL), at: t)
        case .statusText(let s):
            statusText = Stamped(s, at: t)
        }
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
