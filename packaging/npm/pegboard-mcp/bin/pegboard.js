#!/usr/bin/env node
// The `pegboard-mcp` and `pegboard` commands of the npm package: they run the `pegboard` binary of
// the platform package that npm installed beside this one (`@pegboard-mcp/<os>-<cpu>`, an
// optional dependency whose os/cpu fields let npm install only the one for this machine: the
// layout of esbuild and Biome), with this process's arguments and stdio.
//
// It writes nothing on stdout: under `pegboard serve` over stdio, stdout is the MCP client's.
// Signals it receives go on to the gateway (SIGHUP reloads its config), and it ends as the
// gateway ended: the same exit code, or killed by the same signal.
'use strict';

const { spawn } = require('node:child_process');
const os = require('node:os');

const platform = `${process.platform}-${process.arch}`;
const platformPackage = `@pegboard-mcp/${platform}`;
const executable = process.platform === 'win32' ? 'pegboard.exe' : 'pegboard';

/** The platform package's binary, or null when that package is not installed. */
function findBinary() {
  try {
    return require.resolve(`${platformPackage}/bin/${executable}`);
  } catch {
    return null;
  }
}

/** Writes `message` on stderr and exits with `code`. */
function fail(message, code) {
  process.stderr.write(`pegboard-mcp: ${message}\n`);
  process.exit(code);
}

const binary = findBinary();
if (binary === null) {
  const published = Object.keys(require('../package.json').optionalDependencies || {})
    .map((name) => name.replace('@pegboard-mcp/', ''))
    .join(', ');
  fail(
    `no pegboard binary for this machine (${platform}): the package ${platformPackage} is not ` +
      `installed. Binaries are published for ${published} (Linux: glibc). If this machine is one ` +
      `of them, reinstall without --omit=optional or --no-optional (npm installs the binary as an ` +
      `optional dependency); otherwise build it from source (docs/install.md).`,
    1,
  );
}

const child = spawn(binary, process.argv.slice(2), { stdio: 'inherit', windowsHide: true });

const forwarded = process.platform === 'win32' ? ['SIGINT', 'SIGTERM'] : ['SIGINT', 'SIGTERM', 'SIGHUP'];
const handlers = new Map();
for (const signal of forwarded) {
  const handler = () => {
    // Ctrl-C in a terminal reaches both processes; pegboard takes a second SIGINT calmly.
    child.kill(signal);
  };
  handlers.set(signal, handler);
  process.on(signal, handler);
}

child.on('error', (error) => {
  fail(`cannot start ${binary}: ${error.message}. Reinstall pegboard-mcp.`, 127);
});

child.on('exit', (code, signal) => {
  if (signal !== null) {
    // Die of the same signal, so that whoever started this sees what happened to the gateway.
    const handler = handlers.get(signal);
    if (handler !== undefined) {
      process.removeListener(signal, handler);
    }
    try {
      process.kill(process.pid, signal);
    } catch {
      // Fall through to the shell's convention below.
    }
    process.exit(128 + (os.constants.signals[signal] || 0));
  }
  process.exit(code === null ? 1 : code);
});
