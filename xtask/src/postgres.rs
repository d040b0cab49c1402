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
    /// `pg_ctl start`'s server options (port, socket folder, settings).
    options: String,
    /// `postgres://seri@127.0.0.1:PORT/postgres?sslmode=disable`.
    pub(crate) url: String,
}

impl Cluster {
    /// Starts a fresh cluster, installing PostgreSQL with apt-get first if
    /// it is missing and this user may. Commits are not waited for
    /// (`synchronous_commit=off`): fast, and nothing here crashes it.
    pub(crate) fn start() -> Result<Self, String> {
        Self::start_with(false)
    }

    /// The same, but a commit is acknowledged only once its WAL is written
    /// (`synchronous_commit=on`), so the fault suite's `immediate` stops
    /// lose no committed transaction: a crash of the database, not of the
    /// disk (`fsync` stays off; the operating system keeps what was written).
    pub(crate) fn start_durable() -> Result<Self, String> {
        Self::start_with(true)
    }

    fn start_with(durable: bool) -> Result<Self, String> {
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
        // Several clusters may run in one process (`faults --jobs`): each its own folder.
        static STARTED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = STARTED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = if n == 0 {
            format!("seri-pg-{}", std::process::id())
        } else {
            format!("seri-pg-{}-{n}", std::process::id())
        };
        let dir = std::env::temp_dir().join(name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        if as_postgres {
            run(Command::new("chown").args(["postgres:postgres", &dir.display().to_string()]), "chown")?;
        }
        let port = free_port()?;
        let options = format!(
            "-p {port} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit={} \
             -c full_page_writes=off -c max_connections=200",
            dir.display(),
            if durable { "on" } else { "off" }
        );
        // Its clients never use TLS unless a test asks: one test turns TLS on
        // in this cluster (`crates/store/tests/it/tls.rs`), and the rest must
        // not start trying it meanwhile.
        let url = format!("postgres://seri@127.0.0.1:{port}/postgres?sslmode=disable");
        let cluster = Self { bin, dir, as_postgres, options, url };
        let data = cluster.dir.join("data");
        let data = data.display().to_string();
        cluster.run_as(
            "initdb",
            &["-D", &data, "-U", "seri", "-A", "trust", "-E", "UTF8", "--no-sync", "--no-instructions"],
        )?;
        cluster.start_again()?;
        println!("xtask: PostgreSQL cluster on 127.0.0.1:{port} in {}", cluster.dir.display());
        Ok(cluster)
    }

    /// Starts the cluster (again, after [`Cluster::stop`]) on the same port
    /// and data, waiting until it accepts connections.
    pub(crate) fn start_again(&self) -> Result<(), String> {
        let data = self.dir.join("data").display().to_string();
        let log = self.dir.join("postgres.log").display().to_string();
        self.run_as("pg_ctl", &["-D", &data, "-o", &self.options, "-l", &log, "-w", "-t", "60", "start"])
    }

    /// Stops the cluster the way a crash or an operator would (`immediate`:
    /// every connection is cut at once), keeping its data for
    /// [`Cluster::start_again`]. The fault suite's store outage.
    pub(crate) fn stop(&self) -> Result<(), String> {
        let data = self.dir.join("data").display().to_string();
        self.run_as("pg_ctl", &["-D", &data, "-m", "immediate", "-w", "stop"])
    }

    /// Whether the cluster accepts connections now (`pg_isready`).
    pub(crate) fn is_ready(&self) -> bool {
        let ready = self.bin.join("pg_isready");
        run(Command::new(&ready).args(["-q", "-d", self.url.as_str()]), "pg_isready").is_ok()
    }

    /// Runs `sql` with `psql` as the cluster's superuser, on the `postgres` database.
    pub(crate) fn psql(&self, sql: &str) -> Result<(), String> {
        let psql = self.bin.join("psql");
        run(Command::new(&psql).args([self.url.as_str(), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", sql]), "psql")
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
