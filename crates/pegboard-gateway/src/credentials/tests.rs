//! The file store: modes, atomic replacement, one entry's change never losing another's.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::file::FILE_NAME;
use super::*;
use crate::config::OAuthSettings;

fn client(id: &str) -> ClientRegistration {
    ClientRegistration {
        client_id: id.to_string(),
        client_secret: Some("client-secret-value".into()),
        redirect_uri: "http://127.0.0.1:33418/callback".into(),
        issuer: Some("https://as.example.com".into()),
        kind: RegistrationKind::Dynamic,
    }
}

fn key(url: &str) -> StoreKey {
    StoreKey::new(url, &OAuthSettings::default())
}

#[cfg(unix)]
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .expect("metadata")
        .permissions()
        .mode()
        & 0o777
}

#[cfg(unix)]
#[tokio::test]
async fn the_file_is_0600_in_a_0700_folder() {
    let root = tempfile::tempdir().expect("tempdir");
    let dir = root.path().join("pegboard");
    let store = Store::file_in(dir.clone());
    let entry = store.server(key("https://a.example/mcp"));
    entry
        .update(|_| Some(CredentialRecord::new("https://a.example/mcp", client("c1"))))
        .await
        .expect("update");
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(&dir.join(FILE_NAME)), 0o600);
    assert_eq!(mode(&dir.join("locks")), 0o700);
    // Nothing but the file, its lock and the lock folder: no temporary file left behind.
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("read_dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["credentials.json", "credentials.json.lock", "locks"],
        "{names:?}"
    );
}

#[cfg(unix)]
#[tokio::test]
async fn a_write_replaces_the_file_and_never_shows_half_of_it() {
    use std::os::unix::fs::MetadataExt;
    let root = tempfile::tempdir().expect("tempdir");
    let dir = root.path().join("pegboard");
    let store = Store::file_in(dir.clone());
    let path = dir.join(FILE_NAME);
    let entry = store.server(key("https://a.example/mcp"));
    entry
        .update(|_| Some(CredentialRecord::new("https://a.example/mcp", client("c0"))))
        .await
        .expect("first write");
    // Held open, the first file keeps its inode (which could be reused once freed).
    let first = std::fs::File::open(&path).expect("open");
    let first_inode = first.metadata().expect("metadata").ino();

    // A reader that parses the file over and over while it is rewritten: every read must be a
    // whole file (the old or the new one).
    let stop = Arc::new(AtomicBool::new(false));
    let reader = std::thread::spawn({
        let stop = stop.clone();
        let path = path.clone();
        move || {
            let mut reads = 0u32;
            while !stop.load(Ordering::SeqCst) {
                let text = std::fs::read(&path).expect("the file is always there");
                serde_json::from_slice::<serde_json::Value>(&text)
                    .expect("every read is a whole JSON file");
                reads += 1;
            }
            reads
        }
    });
    for n in 1..=50 {
        // Long client ids make the file large enough that a write in place would be seen half done.
        let id = format!("client-{n}-{}", "x".repeat(20_000));
        entry
            .update(move |_| Some(CredentialRecord::new("https://a.example/mcp", client(&id))))
            .await
            .expect("write");
    }
    stop.store(true, Ordering::SeqCst);
    let reads = reader.join().expect("reader");
    assert!(reads > 0);
    // Replaced by a rename, not rewritten in place: the first file is intact, the path is a new one.
    assert_ne!(
        std::fs::metadata(&path).expect("metadata").ino(),
        first_inode
    );
    let kept: serde_json::Value = serde_json::from_reader(first).expect("the first file");
    assert!(kept.to_string().contains("\"c0\""), "{kept}");
    assert_eq!(mode(&path), 0o600);
}

#[tokio::test]
async fn concurrent_changes_to_two_servers_both_stay() {
    let root = tempfile::tempdir().expect("tempdir");
    let store = Store::file_in(root.path().join("pegboard"));
    let mut tasks = Vec::new();
    for n in 0..8 {
        let entry = store.server(key(&format!("https://s{n}.example/mcp")));
        tasks.push(tokio::spawn(async move {
            entry
                .update(move |_| {
                    Some(CredentialRecord::new(
                        &format!("https://s{n}.example/mcp"),
                        client(&format!("c{n}")),
                    ))
                })
                .await
        }));
    }
    for task in tasks {
        task.await.expect("join").expect("update");
    }
    for n in 0..8 {
        let record = store
            .server(key(&format!("https://s{n}.example/mcp")))
            .load()
            .await
            .expect("load")
            .expect("every server's record is there");
        assert_eq!(record.client.client_id, format!("c{n}"));
    }
}

#[tokio::test]
async fn a_corrupt_file_is_reported_and_left_as_it_is() {
    let root = tempfile::tempdir().expect("tempdir");
    let dir = root.path().join("pegboard");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(dir.join(FILE_NAME), b"{ not json").expect("write");
    let store = Store::file_in(dir.clone());
    let entry = store.server(key("https://a.example/mcp"));
    let err = entry.load().await.expect_err("must fail");
    assert!(err.to_string().contains("is not valid"), "{err}");
    let err = entry
        .update(|_| Some(CredentialRecord::new("https://a.example/mcp", client("c"))))
        .await
        .expect_err("must fail");
    assert!(err.to_string().contains("left untouched"), "{err}");
    assert_eq!(
        std::fs::read(dir.join(FILE_NAME)).expect("read"),
        b"{ not json"
    );
}

#[tokio::test]
async fn a_watcher_sees_a_login_made_elsewhere() {
    let root = tempfile::tempdir().expect("tempdir");
    let store = Store::file_in(root.path().join("pegboard"));
    let entry = store.server(key("https://a.example/mcp"));
    let waiting = tokio::spawn({
        let entry = entry.clone();
        async move { entry.wait_for(|r| r.client.client_id == "late").await }
    });
    // Another handle on the same entry (as another process would have) writes the record.
    let other = Store::file_in(root.path().join("pegboard")).server(key("https://a.example/mcp"));
    other
        .update(|_| {
            Some(CredentialRecord::new(
                "https://a.example/mcp",
                client("late"),
            ))
        })
        .await
        .expect("update");
    let record = tokio::time::timeout(std::time::Duration::from_secs(10), waiting)
        .await
        .expect("the watcher saw the change")
        .expect("join");
    assert_eq!(record.client.client_id, "late");
}

#[test]
fn debug_output_redacts_the_client_secret() {
    let record = CredentialRecord::new("https://a.example/mcp", client("c"));
    let text = format!("{record:?}");
    assert!(!text.contains("client-secret-value"), "{text}");
    assert!(text.contains("[redacted]"), "{text}");
}
