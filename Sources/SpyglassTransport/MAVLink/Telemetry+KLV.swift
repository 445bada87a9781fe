extension Telemetry {
    /// Applies a MISB ST 0601 local set (``PlatformMetadata``) of a stream that carries KLV:
    /// the sensor's position and true altitude (tags 13–15) and the platform's heading (tag 5),
    /// stamped on `arrivalMicros`, so that the OSD shows a KLV platform as it shows a MAVLink one.
    public mutating func apply(_ platform: PlatformMetadata, arrivalMicros t: UInt64) {
        if let la = platform.latitudeDegrees, let lo = platform.longitudeDegrees {
            position = Stamped(GeoPoint(latitude: la, longitude: lo, altitudeMSL: platform.altitudeMeters), at: t)
        }
        if let h = platform.headingDegrees { heading = Stamped(h, at: t) }
        lastMessageMicros = t
    }
}
