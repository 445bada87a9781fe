import CSystem
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
import SpyglassIngest
import SpyglassDisplay
#endif

/// Ctrl-C (SIGINT) and SIGTERM, never lost: one `sigaction` handler for the whole process writes
/// each signal to a pipe, and a thread of its own reads it and runs the action set with
/// ``onSignal(_:)``.
///
/// libdispatch's signal sources, used before, set the signal to `SIG_IGN` and read it through
/// a `signalfd`, which sees only signals blocked in the thread the kernel picks; a signal that
/// reached a thread where it was not blocked was ignored. 2 in 60 quick start/stop cycles of a
/// wall never stopped (issue 17). A handler runs on whichever thread takes the signal, and the
/// pipe hands the rest to a thread that can do anything.
public enum StopSignals {
    /// What a signal does. A struct, not a bare closure, so that the `Mutex` below holds no
    /// function value (see ``WakeSignal``: a closure read through a `Mutex` gains a thunk a read).
    private struct Action: Sendable {
        let run: @Sendable (_ signal: Int32, _ count: Int) -> Void
    }
    private static let action = Mutex<Action?>(nil)
    private static let installed = Atomic<Bool>(false)

    /// Installs the handler and starts the thread that reads it; later calls do nothing. Call it
    /// first, before any other thread starts. Until ``onSignal(_:)`` sets an action, a signal
    /// ends the process at once with status 128 + its number.
    public static func install() {
        guard !installed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        signal(SIGPIPE, SIG_IGN)
        guard spy_install_stop_signals() == 0 else {
            Log.error("cannot install the Ctrl-C handler: \(String(cString: strerror(errno)))")
            return
        }
        let t = Thread {
            _ = spy_name_this_thread("stop signals")
            var count = 0
            while true {
                let sig = spy_wait_stop_signal()
                guard sig > 0 else { return }
                count += 1
                if let a = action.withLock({ $0 }) { a.run(sig, count) } else {
                    // Before a command has said what a stop means (argument parsing, start-up).
                    writeStandardError("spyglass: interrupted while starting\n")
                    _exit(128 + sig)
                }
            }
        }
        t.stackSize = 256 << 10
        t.start()
    }

    /// Sets what SIGINT and SIGTERM do from now on (nil: say "interrupted while starting" and end the process at once, status 128 + the signal).
    /// - Parameter run: called on the signal thread with the signal's number and how many
    ///   signals have come so far (1 for the first); it may block without delaying the handler.
    public static func onSignal(_ run: (@Sendable (_ signal: Int32, _ count: Int) -> Void)?) {
        action.withLock { $0 = run.map(Action.init) }
    }
}
