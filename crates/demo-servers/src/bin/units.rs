//! `pegboard-demo-units`: a unit converter MCP server (stdio by default, `--http ADDR`).

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    demo_servers::serve::simple_main(
        "pegboard-demo-units",
        "unit converter MCP server (tools: convert, list_units)",
        demo_servers::UnitsServer::new,
    )
    .await
}
