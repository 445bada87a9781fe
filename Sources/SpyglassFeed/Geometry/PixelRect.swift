/// A rectangle of whole pixels: origin at the top left, `x` right, `y` down.
public struct PixelRect: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// Left edge, pixels.
    public var x: Int
    /// Top edge, pixels.
    public var y: Int
    /// Width, pixels.
    public var width: Int
    /// Height, pixels.
    public var height: Int

    /// - Parameters: x/y: top-left corner; width/height: size, pixels.
    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x; self.y = y; self.width = width; self.height = height
    }

    /// "WxH+X+Y", as X11 geometry.
    public var description: String { "\(width)x\(height)+\(x)+\(y)" }
}
