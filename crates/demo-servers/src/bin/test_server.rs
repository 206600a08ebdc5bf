//! `pegboard-test-server`: the configurable test server (see `demo_servers::TestServer`).

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    demo_servers::launch::run_by_name("test", args).await
}
