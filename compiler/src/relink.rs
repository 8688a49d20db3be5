//! Quick relinks for `svc dev`: after a flow-only change, run rustc on the generated crate
//! directly, as cargo last ran it, instead of running cargo.
//!
//! A flow change rewrites files of the generated crate and nothing else: the node crate,
//! the manifests and every dependency are as they were. cargo would find that out, but
//! it reads the manifests of the whole graph (about 265 packages) first: 0.3 s of the
//! 1 s a flow change may take to be served on a 2-core machine. So while cargo builds a
//! development server, svc stands in for rustc ([`RUSTC_ENV`]): it records the command
//! and environment cargo gives the generated crate's compile, then runs the real rustc.
//! After a flow-only change, [`replay`] runs that command again.
//!
//! Replaying is safe because it changes nothing cargo relies on: rustc writes the same
//! output files, and cargo, seeing sources newer than its own record of the crate,
//! compiles the crate again at its next build. Anything unexpected (no record, a record of
//! another svc, rustc failing) makes the caller run cargo as usual, which reports errors
//! as it always does.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Set (to the real rustc) when cargo runs svc as its rustc: svc records and passes on.
const RUSTC_ENV: &str = "SVC_REAL_RUSTC";
/// The directory records are written to.
const RECORDS_ENV: &str = "SVC_RUSTC_RECORDS";
/// The server's binary crate, recorded as [`Compile::Server`].
const SERVER_ENV: &str = "SVC_RUSTC_SERVER";
/// The node crate's directory: its library is recorded as [`Compile::Nodes`].
const NODES_ENV: &str = "SVC_RUSTC_NODES";

/// Variables that tie a process to its parent cargo's jobserver: a replay has none.
const JOBSERVER: &[&str] = &["CARGO_MAKEFLAGS", "MAKEFLAGS", "MFLAGS"];

/// A compile svc records and replays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compile {
    /// The user's node crate (a library), after a change to its Rust sources.
    Nodes,
    /// The generated server (the binary), after a flow change and after the node crate.
    Server,
}

impl Compile {
    fn file(self) -> &'static str {
        match self {
            Compile::Nodes => "nodes.json",
            Compile::Server => "server.json",
        }
    }
}

/// How cargo ran one compile, as [`act_as_rustc`] recorded it.
#[derive(serde::Serialize, serde::Deserialize)]
struct Record {
    /// svc's version: a record of another svc is not replayed.
    svc: String,
    rustc: String,
    /// cargo's working directory for rustc (source paths in `args` are relative to it).
    cwd: String,
    args: Vec<String>,
    /// What cargo set for the crate (`CARGO_*`, `SVC_GIT_SHA`, …); the rest of the
    /// environment is svc's own, which cargo inherited.
    env: Vec<(String, String)>,
}

/// Where the compiles of the crate at `crate_dir` are recorded: beside it (`.svc/rustc/`).
pub fn records_dir(crate_dir: &Path) -> PathBuf {
    crate_dir.with_file_name("rustc")
}

/// The variables that make the cargo building binary `bin` run svc as its rustc, to
/// record the binary's compile and (when there is one) the node crate's at `nodes` in
/// `records`.
pub fn recording_env(bin: &str, nodes: Option<&Path>, records: &Path) -> Result<Vec<(&'static str, OsString)>, crate::Error> {
    let svc = std::env::current_exe().map_err(|e| crate::Error::io("find", "svc's own executable", e))?;
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    // cargo runs rustc in the package's directory: paths are absolute.
    let absolute = |p: &Path| std::path::absolute(p).map_err(|e| crate::Error::io("find", p, e));
    let records = absolute(records)?;
    std::fs::create_dir_all(&records).map_err(|e| crate::Error::io("create", &records, e))?;
    let mut env = vec![
        ("RUSTC", svc.into_os_string()),
        (RUSTC_ENV, rustc),
        (RECORDS_ENV, records.into_os_string()),
        (SERVER_ENV, bin.into()),
    ];
    if let Some(nodes) = nodes.and_then(|n| n.canonicalize().ok()) {
        env.push((NODES_ENV, nodes.into_os_string()));
    }
    Ok(env)
}

/// When cargo runs svc as rustc: record the compile asked for, run the real rustc, and
/// exit with its status. Returns (doing nothing) when svc runs as itself.
pub fn act_as_rustc() {
    let Some(rustc) = std::env::var_os(RUSTC_ENV) else {
        return;
    };
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    if let (Some(records), Some(compile)) = (std::env::var_os(RECORDS_ENV), recorded_compile(&args)) {
        // Without a record (a path that is not UTF-8, a full disk) the next change runs
        // cargo: nothing to report here.
        let _ = write_record(&Path::new(&records).join(compile.file()), &rustc, &args);
    }
    let status = Command::new(&rustc)
        .args(&args)
        .env_remove(RUSTC_ENV)
        .env_remove(RECORDS_ENV)
        .env_remove(SERVER_ENV)
        .env_remove(NODES_ENV)
        .status();
    std::process::exit(match status {
        Ok(status) => status.code().unwrap_or(1),
        Err(e) => {
            eprintln!("error: svc cannot run rustc `{}`: {e}", Path::new(&rustc).display());
            1
        }
    });
}

/// Which recorded compile `args` are, if any: the server's binary, or the node crate's
/// library (not its build script, not a `-vV` or `--print` query).
fn recorded_compile(args: &[OsString]) -> Option<Compile> {
    let value = |flag: &str| args.windows(2).find(|w| w[0] == flag).and_then(|w| w[1].to_str());
    let crate_type = value("--crate-type")?;
    let server = std::env::var(SERVER_ENV).ok()?.replace('-', "_");
    if crate_type == "bin" && value("--crate-name") == Some(&server) {
        return Some(Compile::Server);
    }
    let nodes = std::env::var_os(NODES_ENV)?;
    let manifest_dir = Path::new(&std::env::var_os("CARGO_MANIFEST_DIR")?)
        .canonicalize()
        .ok()?;
    (crate_type == "lib" && manifest_dir == Path::new(&nodes)).then_some(Compile::Nodes)
}

fn write_record(path: &Path, rustc: &OsString, args: &[OsString]) -> Option<()> {
    let text = |s: &OsString| s.to_str().map(str::to_string);
    let env = std::env::vars_os()
        .filter(|(k, _)| {
            let k = k.to_string_lossy();
            (k.starts_with("CARGO") || ["SVC_GIT_SHA", "LD_LIBRARY_PATH", "DYLD_LIBRARY_PATH"].contains(&k.as_ref()))
                && !JOBSERVER.contains(&k.as_ref())
        })
        .map(|(k, v)| Some((text(&k)?, text(&v)?)))
        .collect::<Option<Vec<_>>>()?;
    let record = Record {
        svc: crate::emit::SVC_VERSION.to_string(),
        rustc: text(rustc)?,
        cwd: text(&std::env::current_dir().ok()?.into_os_string())?,
        args: args.iter().map(text).collect::<Option<Vec<_>>>()?,
        env,
    };
    std::fs::write(path, serde_json::to_vec_pretty(&record).ok()?).ok()
}

/// Runs the compiles recorded in `records`, in order, as cargo last ran them, and returns
/// the binary the server's compile wrote; `None` when one is not recorded or rustc failed,
/// and cargo should build instead.
pub fn replay(records: &Path, compiles: &[Compile]) -> Option<PathBuf> {
    let mut binary = None;
    for compile in compiles {
        let record: Record = serde_json::from_slice(&std::fs::read(records.join(compile.file())).ok()?).ok()?;
        if record.svc != crate::emit::SVC_VERSION {
            return None;
        }
        let mut cmd = Command::new(&record.rustc);
        cmd.current_dir(&record.cwd)
            .args(&record.args)
            .envs(record.env.iter().map(|(k, v)| (k, v)));
        for var in JOBSERVER {
            cmd.env_remove(var);
        }
        if !cmd.output().ok()?.status.success() {
            return None;
        }
        binary = (*compile == Compile::Server).then(|| output_of(&record.args)).flatten();
    }
    binary.filter(|b| b.is_file())
}

/// The binary a rustc command line writes: `--out-dir`, `--crate-name` and
/// `-C extra-filename` (cargo's way), or `-o`.
fn output_of(args: &[String]) -> Option<PathBuf> {
    let value = |flag: &str| args.windows(2).find(|w| w[0] == flag).map(|w| w[1].as_str());
    if let Some(out) = value("-o") {
        return Some(PathBuf::from(out));
    }
    let dir = PathBuf::from(value("--out-dir")?);
    let name = value("--crate-name")?;
    let extra = args
        .windows(2)
        .filter(|w| w[0] == "-C")
        .find_map(|w| w[1].strip_prefix("extra-filename="))
        .unwrap_or_default();
    Some(dir.join(format!("{name}{extra}{}", std::env::consts::EXE_SUFFIX)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(text: &str) -> Vec<String> {
        text.split(' ').map(String::from).collect()
    }

    #[test]
    fn the_binary_is_where_cargo_told_rustc_to_write_it() {
        let a = strings(
            "--crate-name app --edition=2024 src/main.rs --crate-type bin -C metadata=1 -C extra-filename=-f796 --out-dir /t/debug/deps",
        );
        assert_eq!(
            output_of(&a),
            Some(PathBuf::from(format!(
                "/t/debug/deps/app-f796{}",
                std::env::consts::EXE_SUFFIX
            )))
        );
        assert_eq!(
            output_of(&strings("--crate-name app -o /x/app")),
            Some(PathBuf::from("/x/app"))
        );
        assert_eq!(output_of(&strings("--crate-name app")), None);
    }
}
