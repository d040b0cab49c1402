//! Keys pressed while a turn runs. Esc cancels the turn; anything else is
//! kept and handed to the next prompt (a Ctrl-D too: the REPL then leaves,
//! as at the prompt), so typing ahead loses nothing.
//!
//! While the watch runs, the terminal reads keys one by one without echo
//! (`ICANON` and `ECHO` off); `ISIG` stays on, so Ctrl-C is still a signal
//! and cancels as it always did. A question to the person pauses the watch
//! and gives the terminal back its usual line mode until it is answered;
//! the end of the turn restores the terminal as it was.

use std::os::fd::AsFd as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rustix::termios::{LocalModes, OptionalActions, Termios};
use tokio::sync::mpsc;

/// How long after an Esc byte the rest of an escape sequence (an arrow
/// key's) may come; after that it was the Esc key.
const SEQUENCE_GAP: Duration = Duration::from_millis(30);

/// What the watcher thread and the turn share.
struct Shared {
    stop: AtomicBool,
    /// Held by the thread while it reads; `true` while a question is asked.
    paused: Mutex<bool>,
    /// Bytes typed that were not Esc.
    typed: Mutex<Vec<u8>>,
    /// Whether Ctrl-D was typed.
    eof: AtomicBool,
}

/// The watch over one turn.
pub(crate) struct KeyWatch {
    shared: Arc<Shared>,
    thread: Option<std::thread::JoinHandle<()>>,
    /// The terminal's modes before the watch, restored after it.
    saved: Termios,
}

fn raw(saved: &Termios) -> Termios {
    let mut raw = saved.clone();
    raw.local_modes.remove(LocalModes::ICANON | LocalModes::ECHO);
    raw
}

fn set(modes: &Termios) {
    let _ = rustix::termios::tcsetattr(std::io::stdin().as_fd(), OptionalActions::Now, modes);
}

/// Whether stdin has a byte within `wait`.
fn readable(wait: Duration) -> bool {
    let stdin = std::io::stdin();
    let mut fds = [rustix::event::PollFd::new(&stdin, rustix::event::PollFlags::IN)];
    let timeout =
        rustix::event::Timespec { tv_sec: wait.as_secs().try_into().unwrap_or(0), tv_nsec: wait.subsec_nanos().into() };
    matches!(rustix::event::poll(&mut fds, Some(&timeout)), Ok(n) if n > 0)
}

fn read_some(buf: &mut [u8]) -> usize {
    rustix::io::read(std::io::stdin().as_fd(), buf).unwrap_or(0)
}

impl KeyWatch {
    /// Starts watching, when standard input is a terminal that edits
    /// lines; `esc` hears each Esc press. Not on a dumb terminal: its line
    /// reader cannot start a prompt with what was typed ahead, so keys are
    /// left to the terminal there, as they always were.
    pub(crate) fn start(esc: mpsc::UnboundedSender<()>) -> Option<KeyWatch> {
        if crate::render::dumb_terminal() {
            return None;
        }
        let saved = rustix::termios::tcgetattr(std::io::stdin().as_fd()).ok()?;
        set(&raw(&saved));
        let shared = Arc::new(Shared {
            stop: AtomicBool::new(false),
            paused: Mutex::new(false),
            typed: Mutex::default(),
            eof: AtomicBool::new(false),
        });
        let watcher = shared.clone();
        let thread = std::thread::spawn(move || watch(&watcher, &esc));
        Some(KeyWatch { shared, thread: Some(thread), saved })
    }

    /// Gives the terminal back its line mode (a question is asked).
    pub(crate) fn pause(&self) {
        let mut paused = self.shared.paused.lock().unwrap_or_else(PoisonError::into_inner);
        *paused = true;
        self.drain();
        set(&self.saved);
    }

    /// Reads what is waiting before the terminal goes back to line mode:
    /// bytes that arrived without line editing would never make a line in
    /// it, and the next read of a line would wait forever.
    fn drain(&self) {
        let mut buf = [0u8; 256];
        while readable(Duration::ZERO) {
            let n = read_some(&mut buf);
            if n == 0 {
                break;
            }
            if buf[..n].contains(&0x04) {
                self.shared.eof.store(true, Ordering::SeqCst);
            }
            let (_, typed) = split_keys(&buf[..n]);
            self.shared.typed.lock().unwrap_or_else(PoisonError::into_inner).extend(typed);
        }
    }

    /// Watches again (the question was answered).
    pub(crate) fn resume(&self) {
        let mut paused = self.shared.paused.lock().unwrap_or_else(PoisonError::into_inner);
        set(&raw(&self.saved));
        *paused = false;
    }

    /// Ends the watch, restores the terminal, and returns what was typed,
    /// and whether Ctrl-D was.
    pub(crate) fn stop(mut self) -> (String, bool) {
        self.finish();
        let typed = std::mem::take(&mut *self.shared.typed.lock().unwrap_or_else(PoisonError::into_inner));
        (String::from_utf8_lossy(&typed).into_owned(), self.shared.eof.load(Ordering::SeqCst))
    }

    fn finish(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
            self.drain();
        }
        set(&self.saved);
    }
}

impl Drop for KeyWatch {
    fn drop(&mut self) {
        self.finish();
    }
}

fn watch(shared: &Shared, esc: &mpsc::UnboundedSender<()>) {
    let mut buf = [0u8; 256];
    while !shared.stop.load(Ordering::SeqCst) {
        let paused = shared.paused.lock().unwrap_or_else(PoisonError::into_inner);
        if *paused {
            drop(paused);
            std::thread::sleep(Duration::from_millis(20));
            continue;
        }
        if !readable(Duration::from_millis(100)) {
            continue;
        }
        let n = read_some(&mut buf);
        if n == 0 {
            // End of input: nothing more will come.
            return;
        }
        let mut bytes = buf[..n].to_vec();
        // An Esc that ends what was read may be the start of a sequence
        // whose rest is on its way.
        if bytes.last() == Some(&0x1b) && readable(SEQUENCE_GAP) {
            let more = read_some(&mut buf);
            bytes.extend_from_slice(&buf[..more]);
        }
        let (pressed, typed) = split_keys(&bytes);
        if bytes.contains(&0x04) {
            shared.eof.store(true, Ordering::SeqCst);
        }
        drop(paused);
        for _ in 0..pressed {
            let _ = esc.send(());
        }
        shared.typed.lock().unwrap_or_else(PoisonError::into_inner).extend(typed);
    }
}

/// The Esc presses in `bytes` and the other bytes typed. An escape
/// sequence (`ESC [ …` or `ESC O …`, as arrow and function keys send) is
/// neither; other control bytes are dropped, but for the line ends.
pub(crate) fn split_keys(bytes: &[u8]) -> (usize, Vec<u8>) {
    let (mut pressed, mut typed) = (0, Vec::new());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            0x1b => match bytes.get(i + 1) {
                Some(b'[' | b'O') => {
                    // Skip to the sequence's final byte (a letter or `~`).
                    i += 2;
                    while i < bytes.len() && !(bytes[i].is_ascii_alphabetic() || bytes[i] == b'~') {
                        i += 1;
                    }
                }
                _ => pressed += 1,
            },
            b'\r' | b'\n' => typed.push(b'\n'),
            b if b < 0x20 || b == 0x7f => {}
            b => typed.push(b),
        }
        i += 1;
    }
    (pressed, typed)
}

#[cfg(test)]
mod tests {
    use super::split_keys;

    #[test]
    fn esc_alone_is_a_press_and_sequences_are_not() {
        assert_eq!(split_keys(b"\x1b"), (1, Vec::new()));
        assert_eq!(split_keys(b"\x1b[A\x1bOB"), (0, Vec::new()), "arrow keys");
        assert_eq!(split_keys(b"\x1b[3~x"), (0, b"x".to_vec()), "delete, then a letter");
        assert_eq!(split_keys(b"hi\x1b\x1b"), (2, b"hi".to_vec()));
        assert_eq!(split_keys(b"next one\r\x04\x7f"), (0, b"next one\n".to_vec()));
    }
}
