import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';

/**
 * A small MCP server written with the official SDK, for tests (`mcp-test-server.cjs` beside
 * this file): tools `echo {text}`, `fail` (an error result), `picture` (text + image),
 * `whereami` (cwd, HOME, pid, `MCP_TEST_GIVEN`, `MCP_TEST_LEAK`), `slow {ms}` (honours
 * cancellation). Run it with node: no argument serves stdio, `--http` serves Streamable HTTP.
 */
export const MCP_TEST_SERVER_SCRIPT = join(__dirname, 'mcp-test-server.cjs');

/** The test MCP server over Streamable HTTP on 127.0.0.1 (a child process). */
export interface HttpMcpTestServer {
  url: string;
  close(): Promise<void>;
}

export function startHttpMcpTestServer(): Promise<HttpMcpTestServer> {
  const child: ChildProcess = spawn(process.execPath, [MCP_TEST_SERVER_SCRIPT, '--http'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let seen = '';
    child.once('exit', (code) => reject(new Error(`the MCP test server exited (${code})`)));
    child.stdout?.on('data', (chunk: Buffer) => {
      seen += chunk.toString('utf8');
      const url = /listening (\S+)/.exec(seen)?.[1];
      if (url === undefined) return;
      resolve({
        url,
        close: () =>
          new Promise<void>((done) => {
            if (child.exitCode !== null) return done();
            child.once('exit', () => done());
            child.kill();
          }),
      });
    });
  });
}
