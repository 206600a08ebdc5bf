// Lays out the npm packages for this machine, ready for `npm pack` (scripts/package.sh runs it):
//
//   node packaging/npm/stage.mjs VERSION BINARY OUT_DIR
//
// OUT_DIR/pegboard-mcp   the launcher (packaging/npm/pegboard-mcp), its version and those of its
//                        optional platform packages set to VERSION (the workspace's)
// OUT_DIR/<os>-<cpu>     @pegboard-mcp/<os>-<cpu>: BINARY as bin/pegboard(.exe), with the os/cpu
//                        (and, on Linux, libc) fields that make npm install it only there
//
// The platform is this machine's as Node names it (process.platform, process.arch): the binary
// is a native build. It must be one the launcher lists, or nothing could install the package.
import { chmodSync, copyFileSync, cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const [version, binary, outDir] = process.argv.slice(2);
if (!version || !binary || !outDir) {
  console.error('usage: node packaging/npm/stage.mjs VERSION BINARY OUT_DIR');
  process.exit(2);
}

const here = dirname(fileURLToPath(import.meta.url));
const scope = '@pegboard-mcp';
const platform = `${process.platform}-${process.arch}`;

const launcherDir = join(outDir, 'pegboard-mcp');
rmSync(launcherDir, { recursive: true, force: true });
cpSync(join(here, 'pegboard-mcp'), launcherDir, { recursive: true });
const launcher = JSON.parse(readFileSync(join(launcherDir, 'package.json'), 'utf8'));
launcher.version = version;
for (const name of Object.keys(launcher.optionalDependencies)) {
  launcher.optionalDependencies[name] = version;
}
if (!(`${scope}/${platform}` in launcher.optionalDependencies)) {
  console.error(
    `stage: ${platform} is not among the launcher's platforms ` +
      `(${Object.keys(launcher.optionalDependencies).join(', ')}); ` +
      'add it to packaging/npm/pegboard-mcp/package.json first',
  );
  process.exit(1);
}
writeFileSync(join(launcherDir, 'package.json'), `${JSON.stringify(launcher, null, 2)}\n`);

const platformDir = join(outDir, platform);
rmSync(platformDir, { recursive: true, force: true });
mkdirSync(join(platformDir, 'bin'), { recursive: true });
const executable = process.platform === 'win32' ? 'pegboard.exe' : 'pegboard';
copyFileSync(binary, join(platformDir, 'bin', executable));
chmodSync(join(platformDir, 'bin', executable), 0o755);
const manifest = {
  name: `${scope}/${platform}`,
  version,
  description: `The pegboard binary for ${platform}: installed by the pegboard-mcp package, not on its own.`,
  license: launcher.license,
  repository: launcher.repository,
  os: [process.platform],
  cpu: [process.arch],
  // The binary links the system's glibc: on musl (Alpine) npm skips it rather than install
  // something that cannot start.
  ...(process.platform === 'linux' ? { libc: ['glibc'] } : {}),
  files: [`bin/${executable}`],
  preferUnplugged: true,
};
writeFileSync(join(platformDir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
writeFileSync(
  join(platformDir, 'README.md'),
  `# ${scope}/${platform}\n\nThe \`pegboard\` binary for ${platform}. Install [pegboard-mcp](https://www.npmjs.com/package/pegboard-mcp) instead: it installs this package on ${platform} and runs the binary.\n`,
);
console.log(`${launcherDir}\n${platformDir}`);
