//! `pegboard-demo-notes`: an in-memory notes MCP server (stdio by default, `--http ADDR`).

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    demo_servers::serve::simple_main(
        "pegboard-demo-notes",
        "in-memory notes MCP server (tools: add_note, search, list_notes)",
        demo_servers::NotesServer::new,
    )
    .await
}
