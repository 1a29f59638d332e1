//! Nonces for sealing, and other unique random ids, without a system call per draw.
//!
//! XChaCha20-Poly1305 needs each nonce used once under a key; its 24 bytes are long enough
//! to draw at random. Each thread draws them from a ChaCha20 keystream keyed from the OS
//! random source, and takes a fresh key every [`DRAWS_PER_KEY`] draws and in a forked
//! child (which would otherwise continue its parent's stream). Nonces are public (they
//! travel in the token), so only their uniqueness matters: two keystreams repeating a
//! 24-byte block is as unlikely as two random draws colliding. The round ledger's owner
//! ids ([`unique`], 16 bytes a claim) need only the same, and come from the same streams:
//! a draw never repeats bytes another draw was given.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

use chacha20::ChaCha20;
use chacha20::cipher::{KeyIvInit, StreamCipher};

use super::sealer::NONCE_LEN;

/// Draws (nonces and ids) from one key before the next (far below the keystream's 256 GiB).
const DRAWS_PER_KEY: u32 = 1 << 20;

/// Bumped in a forked child, before any of its code runs.
static FORKS: AtomicU64 = AtomicU64::new(0);

struct Stream {
    cipher: ChaCha20,
    forks: u64,
    left: u32,
}

thread_local! {
    static STREAM: RefCell<Option<Stream>> = const { RefCell::new(None) };
}

/// A fresh nonce. Fails only when the OS random source does (when a key is taken).
pub(super) fn fresh() -> Result<[u8; NONCE_LEN], getrandom::Error> {
    unique()
}

/// `N` random bytes for an id that must be unique, not secret (a nonce, a ledger claim's
/// owner): the thread's keystream, no system call but when a key is taken. Fails only when
/// the OS random source does (when a key is taken).
pub(crate) fn unique<const N: usize>() -> Result<[u8; N], getrandom::Error> {
    STREAM.with(|stream| {
        let mut stream = stream.borrow_mut();
        let forks = FORKS.load(Ordering::Acquire);
        let current = match stream.as_mut() {
            Some(current) if current.forks == forks && current.left > 0 => current,
            _ => stream.insert(keyed(forks)?),
        };
        current.left -= 1;
        let mut bytes = [0u8; N];
        current.cipher.apply_keystream(&mut bytes);
        Ok(bytes)
    })
}

fn keyed(forks: u64) -> Result<Stream, getrandom::Error> {
    watch_forks();
    let mut key = zeroize::Zeroizing::new([0u8; 32]);
    let mut iv = [0u8; 12];
    getrandom::fill(&mut key[..])?;
    getrandom::fill(&mut iv)?;
    Ok(Stream {
        cipher: ChaCha20::new(&(*key).into(), &iv.into()),
        forks,
        left: DRAWS_PER_KEY,
    })
}

/// Registers, once per process, the fork handler that makes every thread take a new key.
#[cfg(unix)]
fn watch_forks() {
    extern "C" fn in_child() {
        FORKS.fetch_add(1, Ordering::AcqRel);
    }
    static WATCH: std::sync::Once = std::sync::Once::new();
    WATCH.call_once(|| {
        // SAFETY: registers a handler that only touches an atomic, which is
        // async-signal-safe as a fork handler must be.
        #[allow(unsafe_code)]
        let registered = unsafe { libc::pthread_atfork(None, None, Some(in_child)) };
        if registered != 0 {
            tracing::warn!("no fork handler: a forked child would need to restart sealing");
        }
    });
}

#[cfg(not(unix))]
fn watch_forks() {}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn nonces_do_not_repeat_across_draws_keys_and_threads() {
        let mut seen = HashSet::new();
        for _ in 0..10_000 {
            assert!(seen.insert(fresh().unwrap()));
        }
        // A new key (as after a fork) starts a new stream, not the old one again.
        FORKS.fetch_add(1, Ordering::AcqRel);
        for _ in 0..1_000 {
            assert!(seen.insert(fresh().unwrap()));
        }
        let other: Vec<_> = std::thread::spawn(|| (0..1_000).map(|_| fresh().unwrap()).collect())
            .join()
            .unwrap();
        for nonce in other {
            assert!(seen.insert(nonce));
        }
    }

    /// A forked child continuing its parent's stream would repeat the parent's next nonce.
    #[cfg(unix)]
    #[test]
    #[allow(unsafe_code)]
    fn a_forked_child_does_not_repeat_its_parents_nonces() {
        fresh().unwrap();
        let mut pipe = [0; 2];
        assert_eq!(unsafe { libc::pipe(pipe.as_mut_ptr()) }, 0);
        // SAFETY: the child only draws a nonce, writes it to the pipe and exits.
        let child = unsafe { libc::fork() };
        assert!(child >= 0, "fork failed");
        if child == 0 {
            let nonce = fresh().unwrap_or([0; NONCE_LEN]);
            unsafe {
                libc::write(pipe[1], nonce.as_ptr().cast(), NONCE_LEN);
                libc::_exit(0);
            }
        }
        let mut from_child = [0u8; NONCE_LEN];
        let read = unsafe { libc::read(pipe[0], from_child.as_mut_ptr().cast(), NONCE_LEN) };
        let mut status = 0;
        unsafe {
            libc::waitpid(child, &mut status, 0);
            libc::close(pipe[0]);
            libc::close(pipe[1]);
        }
        assert_eq!(read, NONCE_LEN as isize);
        assert_ne!(from_child, [0; NONCE_LEN]);
        assert_ne!(from_child, fresh().unwrap());
    }

    /// A claim's owner is a draw from this thread's stream, not a system call.
    #[test]
    fn owners_are_drawn_from_the_threads_stream() {
        let state = || STREAM.with(|stream| stream.borrow().as_ref().map(|s| (s.forks, s.left)));
        let mut owners = HashSet::new();
        // Another test bumps the fork count once, which rekeys the stream midway: measure
        // again then.
        for _ in 0..2 {
            fresh().unwrap();
            let (forks, before) = state().unwrap();
            owners.extend((0..1_000).map(|_| crate::server::ledger::Owner::random().0));
            let (forks_after, after) = state().unwrap();
            if forks_after == forks {
                assert_eq!(after, before - 1_000);
                let ids: HashSet<[u8; 16]> = (0..1_000).map(|_| unique().unwrap()).collect();
                assert_eq!(ids.len(), 1_000);
                assert!(
                    ids.iter()
                        .all(|id| !owners.contains(&u128::from_le_bytes(*id)))
                );
                return;
            }
        }
        panic!("the fork count changed twice");
    }

    #[test]
    fn a_spent_key_is_replaced() {
        fresh().unwrap();
        let before = STREAM.with(|stream| {
            let mut stream = stream.borrow_mut();
            let stream = stream.as_mut().unwrap();
            stream.left = 1;
            stream.forks
        });
        fresh().unwrap();
        let left = STREAM.with(|stream| stream.borrow().as_ref().unwrap().left);
        assert_eq!(left, 0);
        fresh().unwrap();
        let (left, forks) = STREAM.with(|stream| {
            let stream = stream.borrow();
            let stream = stream.as_ref().unwrap();
            (stream.left, stream.forks)
        });
        assert_eq!((left, forks), (DRAWS_PER_KEY - 1, before));
    }
}
