//! A throw-away PostgreSQL cluster for the store's contract suite and the
//! multi-server tests: `initdb` into a temporary directory, `pg_ctl start`
//! on a free loopback port, and `pg_ctl stop` plus removal when dropped.
//!
//! PostgreSQL refuses to run as root, so as root the cluster runs as the
//! `postgres` user the Debian package creates (through `runuser`). Nothing
//! listens beyond 127.0.0.1; authentication is `trust` for the one user.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A running cluster; stopped and deleted when dropped.
pub(crate) struct Cluster {
    bin: PathBuf,
    dir: PathBuf,
    as_postgres: bool,
    /// `postgres://seri@127.0.0.1:PORT/postgres`.
    pub(crate) url: String,
}

impl Cluster {
    /// Starts a fresh cluster, installing PostgreSQL with apt-get first if
    /// it is missing and this user may.
    pub(crate) fn start() -> Result<Self, String> {
        let bin = match find_bin() {
            Some(bin) => bin,
            None => {
                crate::apt_install(&["postgresql"], "the store's PostgreSQL tests need PostgreSQL (initdb, pg_ctl)")?;
                find_bin().ok_or("apt-get installed postgresql, but initdb is still not found")?
            }
        };
        let as_postgres = crate::is_root();
        if as_postgres && !Command::new("id").arg("postgres").stdout(Stdio::null()).status().is_ok_and(|s| s.success())
        {
            // PostgreSQL built without Debian's package has no user to run as.
            run(Command::new("useradd").args(["--system", "--no-create-home", "postgres"]), "useradd postgres")?;
        }
        let dir = std::env::temp_dir().join(format!("seri-pg-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        if as_postgres {
            run(Command::new("chown").args(["postgres:postgres", &dir.display().to_string()]), "chown")?;
        }
        let port = free_port()?;
        let cluster = Self { bin, dir, as_postgres, url: format!("postgres://seri@127.0.0.1:{port}/postgres") };
        let data = cluster.dir.join("data");
        let data = data.display().to_string();
        cluster.run_as(
            "initdb",
            &["-D", &data, "-U", "seri", "-A", "trust", "-E", "UTF8", "--no-sync", "--no-instructions"],
        )?;
        let options = format!(
            "-p {port} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off \
             -c full_page_writes=off -c max_connections=200",
            cluster.dir.display()
        );
        let log = cluster.dir.join("postgres.log").display().to_string();
        cluster.run_as("pg_ctl", &["-D", &data, "-o", &options, "-l", &log, "-w", "-t", "60", "start"])?;
        println!("xtask: PostgreSQL cluster on 127.0.0.1:{port} in {}", cluster.dir.display());
        Ok(cluster)
    }

    fn run_as(&self, program: &str, args: &[&str]) -> Result<(), String> {
        let program = self.bin.join(program).display().to_string();
        let mut command = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--", &program]);
            c
        } else {
            Command::new(&program)
        };
        command.args(args).current_dir(&self.dir);
        run(&mut command, &program)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let data = self.dir.join("data").display().to_string();
        if let Err(e) = self.run_as("pg_ctl", &["-D", &data, "-m", "immediate", "-w", "stop"]) {
            eprintln!("xtask: stopping the PostgreSQL cluster: {e}");
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn run(command: &mut Command, what: &str) -> Result<(), String> {
    let out = command.stdin(Stdio::null()).output().map_err(|e| format!("could not run {what}: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    Err(format!(
        "{what} failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    ))
}

/// The directory holding `initdb` and `pg_ctl`: on PATH, else Debian's
/// newest `/usr/lib/postgresql/N/bin`.
fn find_bin() -> Option<PathBuf> {
    let has = |dir: &Path| dir.join("initdb").is_file() && dir.join("pg_ctl").is_file();
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|dir| has(dir))
        .collect();
    versions.sort();
    versions.pop().or_else(|| {
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path).find(|dir| has(dir))
    })
}

/// A loopback port nothing listens on now.
fn free_port() -> Result<u16, String> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| format!("cannot find a free port: {e}"))?;
    listener.local_addr().map(|a| a.port()).map_err(|e| format!("cannot find a free port: {e}"))
}
