//! `pegboard-demo-docs`: a tiny Rust/MCP docs MCP server (stdio by default, `--http ADDR`).

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    demo_servers::serve::simple_main(
        "pegboard-demo-docs",
        "bundled Rust/MCP docs MCP server (tools: search, read)",
        demo_servers::DocsServer::new,
    )
    .await
}
