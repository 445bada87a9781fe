import Foundation

/// A point on the Earth: WGS-84 latitude and longitude in degrees, altitude above mean sea level
/// in metres when known; with the great-circle distance and bearing to another point.
///
/// The Earth is taken as a sphere of the mean radius (IUGG R1 = 6,371,008.8 m): distances are
/// within about 0.5 % of the ellipsoid's (Vincenty), plenty for "how far is home".
public struct GeoPoint: Equatable, Sendable {
    /// Degrees, -90...90 (north positive).
    public var latitude: Double
    /// Degrees, -180...180 (east positive).
    public var longitude: Double
    /// Metres above mean sea level, when known.
    public var altitudeMSL: Double?

    public init(latitude: Double, longitude: Double, altitudeMSL: Double? = nil) {
        self.latitude = latitude
        self.longitude = longitude
        self.altitudeMSL = altitudeMSL
    }

    /// The mean Earth radius, metres (IUGG R1).
    public static let earthRadius = 6_371_008.8

    /// The great-circle distance to `other`, metres (haversine formula, which stays accurate
    /// for short distances where the spherical law of cosines loses precision).
    public func distance(to other: GeoPoint) -> Double {
        let (φ1, φ2) = (latitude * .pi / 180, other.latitude * .pi / 180)
        let dφ = φ2 - φ1
        let dλ = (other.longitude - longitude) * .pi / 180
        let h = sin(dφ / 2) * sin(dφ / 2) + cos(φ1) * cos(φ2) * sin(dλ / 2) * sin(dλ / 2)
        return 2 * Self.earthRadius * asin(min(1, h.squareRoot()))
    }

    /// The initial great-circle bearing to `other`, degrees 0..<360 clockwise from true north
    /// (the forward azimuth); 0 when the points coincide.
    public func bearing(to other: GeoPoint) -> Double {
        let (φ1, φ2) = (latitude * .pi / 180, other.latitude * .pi / 180)
        let dλ = (other.longitude - longitude) * .pi / 180
        let y = sin(dλ) * cos(φ2)
        let x = cos(φ1) * sin(φ2) - sin(φ1) * cos(φ2) * cos(dλ)
        let degrees = atan2(y, x) * 180 / .pi
        return degrees < 0 ? degrees + 360 : degrees
    }
}
