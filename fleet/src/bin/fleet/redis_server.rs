//! A `redis-server` of the run's own, on a free loopback port with a folder
//! of its own and nothing persisted, stopped when dropped; the faults a
//! store can have are done to it from outside, as an operator would.

use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The install command, for a machine without `redis-server`.
pub const INSTALL: &str = "sudo apt-get install redis-server";

pub struct RedisServer {
    port: u16,
    dir: PathBuf,
    child: Option<Child>,
}

impl RedisServer {
    /// A server on a free loopback port, started; or why not (no
    /// `redis-server`, no port, no folder).
    pub fn start_new(label: &str) -> Result<RedisServer, String> {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .map_err(|error| format!("no free loopback port ({error})"))?
            .port();
        let dir = std::env::temp_dir().join(format!("{label}-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir)
            .map_err(|error| format!("no folder for redis-server ({error})"))?;
        let mut server = RedisServer {
            port,
            dir,
            child: None,
        };
        server.start()?;
        Ok(server)
    }

    /// Starts (again) on the same port, empty.
    pub fn start(&mut self) -> Result<(), String> {
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .args(["--enable-debug-command", "local"])
            .arg("--dir")
            .arg(&self.dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|error| {
                format!("redis-server could not start ({error}); install it with `{INSTALL}`")
            })?;
        self.child = Some(child);
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            if started.elapsed() > Duration::from_secs(10) {
                return Err("redis-server did not start within 10 s".into());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        Ok(())
    }

    /// Kills it at once (`kill -9`): nothing is saved.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Sends it a signal by name (`STOP`, `CONT`).
    pub fn signal(&self, signal: &str) -> Result<(), String> {
        let child = self.child.as_ref().ok_or("redis-server is not running")?;
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(child.id().to_string())
            .status()
            .map_err(|error| format!("kill -{signal}: {error}"))?;
        if status.success() {
            Ok(())
        } else {
            Err(format!("kill -{signal} failed: {status}"))
        }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        // A stopped server would not die of SIGKILL's cleanup otherwise
        // waiting on it; SIGKILL ends a stopped process too.
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
