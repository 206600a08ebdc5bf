//! `connect` and `disconnect`: the `pegboard` entry in a client's file, and (`--move`) the
//! client's own servers moved behind pegboard and back.

use std::path::{Path, PathBuf};

use super::ClientError;
use super::convert::{Launch, launcher};
use super::format::ClientDoc;
use super::import::{Line, import_into};
use super::known::{ALL, ClientId, Env};
use super::moved::{Connection, Connections, file_for};
use crate::config_edit::ConfigEdit;
use crate::safe_write::ensure_writable;

/// The name of pegboard's entry in every client's file.
pub const ENTRY: &str = "pegboard";

/// A client's file at one scope.
#[derive(Debug, Clone)]
pub struct Target {
    /// The client.
    pub client: ClientId,
    /// Its file.
    pub path: PathBuf,
}

impl Target {
    /// The user-scope file of `client`, or (`project`) its project file in `dir`.
    pub fn new(client: ClientId, project: Option<&Path>, env: &Env) -> Result<Self, ClientError> {
        let path = match project {
            Some(dir) => match client.project_file() {
                Some(rel) => rel
                    .split('/')
                    .fold(dir.to_path_buf(), |p, part| p.join(part)),
                None => {
                    let which: Vec<&str> = ALL
                        .iter()
                        .filter(|c| c.project_file().is_some())
                        .map(|c| c.name())
                        .collect();
                    return Err(ClientError::NoProjectScope {
                        client: client.name(),
                        which: which.join(", "),
                    });
                }
            },
            None => client
                .user_path(env)
                .ok_or(ClientError::NoHome(client.name()))?,
        };
        Ok(Self { client, path })
    }

    /// Read and parse the file (a missing one is empty).
    pub fn open(&self) -> Result<ClientDoc, ClientError> {
        Ok(ClientDoc::open(
            &self.path,
            self.client.format(),
            self.client.container(),
        )?)
    }
}

/// What `connect` did.
#[derive(Debug)]
pub struct Connected {
    /// The servers `--move` imported (one line each).
    pub imported: Vec<Line>,
    /// The names taken out of the client's file.
    pub moved: Vec<String>,
    /// Whether the client's file was written (false: it already held this entry).
    pub written: bool,
}

/// Write the `pegboard` entry for `launch` into `target`'s file (replacing an older one); with
/// `move_servers`, first import the client's servers into `config` and take them out of the
/// client's file. pegboard's config is written first, so a server is never only in the record.
pub fn connect(
    mut config: ConfigEdit,
    target: &Target,
    launch: &Launch,
    move_servers: bool,
) -> Result<Connected, ClientError> {
    ensure_writable(&target.path)?;
    let entry = launcher(target.client, launch).map_err(ClientError::Launcher)?;
    let mut doc = target.open()?;
    let record_file = file_for(config.path());
    let mut records = Connections::load(&record_file)?;
    let mut record = records.get(&target.path).cloned().unwrap_or(Connection {
        client: target.client.name().to_string(),
        created_file: !doc.existed(),
        created_section: !doc.has_container(),
        moved: Vec::new(),
    });
    let mut imported = Vec::new();
    let mut moved = Vec::new();
    if move_servers {
        let entries = doc.entries()?;
        imported = import_into(&mut config, target.client, &entries)?;
        for line in imported.iter().filter(|l| l.in_pegboard()) {
            if let Some(value) = doc.remove(&line.name)? {
                moved.push(line.name.clone());
                record.moved.push((line.name.clone(), value));
            }
        }
    }
    doc.upsert(ENTRY, &entry)?;
    config.save()?;
    records.set(&target.path, record);
    records.save(&record_file)?;
    let written = doc.save()?;
    Ok(Connected {
        imported,
        moved,
        written,
    })
}

/// What `disconnect` did.
#[derive(Debug)]
pub struct Disconnected {
    /// The servers put back.
    pub restored: Vec<String>,
    /// Servers not put back because the client has one by that name again.
    pub kept: Vec<String>,
    /// The file was removed (pegboard had created it and it holds nothing else).
    pub removed_file: bool,
}

/// Take the `pegboard` entry out of `target`'s file and put back what `connect --move` took out
/// (records beside the config `config_path`). pegboard's config keeps the moved servers.
pub fn disconnect(
    config_path: Option<&Path>,
    target: &Target,
) -> Result<Disconnected, ClientError> {
    ensure_writable(&target.path)?;
    let mut doc = target.open()?;
    let record_file = config_path.map(file_for);
    let mut records = match &record_file {
        Some(f) => Connections::load(f)?,
        None => Connections::default(),
    };
    let record = records.get(&target.path).cloned();
    let had_entry = doc.remove(ENTRY)?.is_some();
    if !had_entry && record.is_none() {
        return Err(ClientError::NotConnected {
            client: target.client.name(),
            path: target.path.clone(),
        });
    }
    let mut restored = Vec::new();
    let mut kept = Vec::new();
    let record = record.unwrap_or_default();
    for (name, value) in &record.moved {
        if doc.entries()?.iter().any(|(n, _)| n == name) {
            kept.push(name.clone());
        } else {
            doc.upsert(name, value)?;
            restored.push(name.clone());
        }
    }
    if record.created_section && doc.entries()?.is_empty() {
        doc.remove_container()?;
    }
    let text = doc.text();
    let empty = matches!(text.trim(), "" | "{}");
    let removed_file = record.created_file && empty && doc.existed();
    if removed_file {
        std::fs::remove_file(&target.path).map_err(|source| {
            crate::edit_error::EditError::Write {
                path: target.path.clone(),
                source,
            }
        })?;
    } else {
        doc.save()?;
    }
    if let Some(f) = &record_file
        && records.forget(&target.path).is_some()
    {
        records.save(f)?;
    }
    Ok(Disconnected {
        restored,
        kept,
        removed_file,
    })
}
