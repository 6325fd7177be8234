//! The dependency of `just fleet --redis`: a gateway on a loopback TCP port
//! that answers each `call` line with `fail` while it is down and `ok`
//! after, and keeps the time of every call that reached it, so that the
//! figures come from what the dependency saw, not from what the nodes say.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

/// A running gateway. Its threads end with the process.
pub struct Gateway {
    address: SocketAddr,
    calls: Arc<Mutex<Vec<Duration>>>,
}

impl Gateway {
    /// A gateway that is down from `start` for `outage`.
    pub fn start(start: Instant, outage: Duration) -> std::io::Result<Gateway> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let address = listener.local_addr()?;
        let calls = Arc::new(Mutex::new(Vec::new()));
        let record = Arc::clone(&calls);
        thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let record = Arc::clone(&record);
                thread::spawn(move || serve(stream, start, outage, &record));
            }
        });
        Ok(Gateway { address, calls })
    }

    /// Where the nodes connect.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// When each call that reached the gateway while it was down arrived,
    /// counted from the start.
    pub fn calls_while_down(&self, outage: Duration) -> Vec<Duration> {
        let calls = self.calls.lock().unwrap_or_else(PoisonError::into_inner);
        calls.iter().copied().filter(|at| *at < outage).collect()
    }
}

fn serve(stream: TcpStream, start: Instant, outage: Duration, calls: &Mutex<Vec<Duration>>) {
    let Ok(mut answer) = stream.try_clone() else {
        return;
    };
    for line in BufReader::new(stream).lines() {
        let Ok(line) = line else { return };
        if line != "call" {
            return;
        }
        let at = start.elapsed();
        calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(at);
        let reply = if at < outage { "fail\n" } else { "ok\n" };
        if answer.write_all(reply.as_bytes()).is_err() {
            return;
        }
    }
}
