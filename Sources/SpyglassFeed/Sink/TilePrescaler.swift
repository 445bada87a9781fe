import Synchronization

/// Shrinks each new picture of a wall feed to its tile on the feed's own thread, right after
/// decoding, while the picture is still in that core's cache; the wall's main thread then only
/// converts the small picture to RGB (libswscale's unscaled SIMD path) instead of scaling the
/// whole picture itself.
///
/// Measured with `tools/wall-bench --feeds 16` (640x360 into 480x270 tiles): the main thread's
/// libswscale share falls from about 0.29 ms to about 0.03 ms a picture, and the feed threads
/// gain about 0.1 ms each; see the README for the whole run.
///
/// The wall says where each feed goes with ``aim(_:)``; a picture is shrunk only when it is 8-bit
/// 4:2:0 and its shown part is larger than the tile in both directions (the focused view and
/// other formats are scaled by the wall as before). A feed not on screen costs nothing here.
public final class TilePrescaler: Sendable {
    /// Where the feed's pictures go now.
    package struct Target: Equatable, Sendable {
        /// The tile, window pixels.
        var width: Int, height: Int
        /// How the picture fills it.
        var gravity: Gravity

        package init(width: Int, height: Int, gravity: Gravity) {
            self.width = width
            self.height = height
            self.gravity = gravity
        }
    }

    /// A picture shrunk for a tile.
    package struct Copy: Sendable {
        /// The part of the original picture it shows (``Gravity/Placement/source``), picture pixels.
        package let source: PixelRect
        /// The small picture: 8-bit 4:2:0, exactly the size it is drawn at.
        package let picture: DecodedPicture
    }

    private let target = Mutex<Target?>(nil)
    /// The feed thread's libswscale context (only that thread scales, so the lock is never
    /// contended), on the fast-bilinear path the wall's tiles use.
    private let converter: Mutex<PictureConverter>

    /// A prescaler aimed nowhere: pictures pass untouched until the wall calls ``aim(_:)``.
    public init() {
        let c = PictureConverter()
        c.fastScaling = true
        converter = Mutex(c)
    }

    /// Sets (or clears, nil) the tile the feed's pictures are shrunk for. Main thread.
    package func aim(_ t: Target?) {
        target.withLock { if $0 != t { $0 = t } }
    }

    /// Shrinks `frame` for the tile aimed at, if any, and keeps the copy with it
    /// (``DecodedFrame/tileCopy``). The feed's thread, before the picture reaches its slot.
    public func prepare(_ frame: inout DecodedFrame) {
        guard let t = target.withLock({ $0 }) else { return }
        let (sn, sd) = frame.sampleAspectRatio
        let aspect = Double(frame.width * sn) / Double(max(1, frame.height * sd))
        let p = t.gravity.placement(width: frame.width, height: frame.height, aspect: aspect,
                                    in: PixelRect(x: 0, y: 0, width: t.width, height: t.height))
        let w = p.destination.width, h = p.destination.height
        guard w < p.source.width, h < p.source.height else { return }
        if let small = converter.withLock({ $0.scaledCopy(of: frame.picture, source: p.source, width: w, height: h) }) {
            frame.tileCopy = Copy(source: p.source, picture: small)
        }
    }
}
