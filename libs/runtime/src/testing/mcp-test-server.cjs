#!/usr/bin/env node
/*
 * A small MCP server for tests, written with the official SDK (low-level Server, plain JSON
 * schemas). `node mcp-test-server.cjs` serves over stdio; `node mcp-test-server.cjs --http`
 * serves Streamable HTTP on 127.0.0.1 (a free port) and prints `listening <url>` on stdout.
 */
const http = require('node:http');
const { Server } = require('@modelcontextprotocol/sdk/server/index.js');
const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');
const {
  StreamableHTTPServerTransport,
} = require('@modelcontextprotocol/sdk/server/streamableHttp.js');
const {
  CallToolRequestSchema,
  ListToolsRequestSchema,
} = require('@modelcontextprotocol/sdk/types.js');

const TOOLS = [
  {
    name: 'echo',
    description: 'Echoes the text back',
    inputSchema: {
      type: 'object',
      properties: { text: { type: 'string', description: 'what to echo' } },
      required: ['text'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'fail',
    description: 'Always answers with an error result',
    inputSchema: { type: 'object', properties: {} },
  },
  {
    name: 'picture',
    description: 'Answers with an image and a caption',
    inputSchema: { type: 'object', properties: {} },
  },
  {
    name: 'whereami',
    description: 'Tells the working directory and part of the environment',
    inputSchema: { type: 'object', properties: {} },
  },
  {
    name: 'slow',
    description: 'Waits for ms milliseconds, or until cancelled',
    inputSchema: {
      type: 'object',
      properties: { ms: { type: 'integer', minimum: 0 } },
      required: ['ms'],
    },
  },
];

function text(value, isError = false) {
  return { content: [{ type: 'text', text: value }], ...(isError ? { isError: true } : {}) };
}

function createServer() {
  const server = new Server(
    { name: 'cognition-test', version: '1.0.0' },
    { capabilities: { tools: {} } },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const args = request.params.arguments ?? {};
    switch (request.params.name) {
      case 'echo':
        return text(`echo: ${String(args.text)}`);
      case 'fail':
        return text('it failed on purpose', true);
      case 'picture':
        return {
          content: [
            { type: 'text', text: 'a red dot' },
            {
              type: 'image',
              data: Buffer.from('not really a png').toString('base64'),
              mimeType: 'image/png',
            },
          ],
        };
      case 'whereami':
        return text(
          JSON.stringify({
            cwd: process.cwd(),
            pid: process.pid,
            home: process.env.HOME ?? null,
            given: process.env.MCP_TEST_GIVEN ?? null,
            leaked: process.env.MCP_TEST_LEAK ?? null,
          }),
        );
      case 'slow':
        await new Promise((resolve) => {
          const timer = setTimeout(resolve, Number(args.ms));
          extra.signal.addEventListener('abort', () => {
            clearTimeout(timer);
            resolve();
          });
        });
        return text(`waited ${String(args.ms)} ms`);
      default:
        throw new Error(`unknown tool ${request.params.name}`);
    }
  });
  return server;
}

async function serveHttp() {
  const httpServer = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      // Stateless: one server and transport per request.
      const server = createServer();
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on('close', () => void transport.close().then(() => server.close()));
      server
        .connect(transport)
        .then(() => transport.handleRequest(req, res, body === '' ? undefined : JSON.parse(body)))
        .catch((error) => {
          res.statusCode = 500;
          res.end(String(error));
        });
    });
  });
  httpServer.listen(0, '127.0.0.1', () => {
    process.stdout.write(`listening http://127.0.0.1:${httpServer.address().port}/mcp\n`);
  });
}

if (process.argv.includes('--http')) {
  void serveHttp();
} else {
  void createServer().connect(new StdioServerTransport());
}
