import type TurndownService from 'turndown';
import { z } from 'zod';
import { refuseNonPublicHost } from '../net/public-address';
import type { RuntimeTool } from './types';
import { capOutput, defineTool } from './types';

export interface WebFetchOptions {
  /** Whole-fetch time limit, redirects included. Default 15 s. */
  timeoutMs?: number;
  /** Bytes of body read at most; the rest is cut off. Default 1 MB. */
  maxBytes?: number;
  /** Default 5. */
  maxRedirects?: number;
  /**
   * Allow loopback, private, link-local and other non-public addresses. Default false, so an
   * agent cannot reach the server's own network (metadata services, databases) by URL.
   */
  allowPrivateNetwork?: boolean;
}

class FetchRefused extends Error {}

async function checkUrl(url: URL, allowPrivateNetwork: boolean): Promise<void> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new FetchRefused(`only http and https URLs can be fetched, not ${url.protocol}`);
  }
  if (allowPrivateNetwork) return;
  const refused = await refuseNonPublicHost(url);
  if (refused !== null) throw new FetchRefused(refused.message);
}

async function readCapped(
  response: Response,
  maxBytes: number,
): Promise<{ text: string; truncated: boolean }> {
  if (!response.body) return { text: '', truncated: false };
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const room = maxBytes - size;
    if (value.byteLength >= room) {
      chunks.push(value.subarray(0, room));
      size += room;
      truncated = value.byteLength > room;
      if (!truncated) continue;
      await reader.cancel();
      break;
    }
    chunks.push(value);
    size += value.byteLength;
  }
  return { text: new TextDecoder().decode(Buffer.concat(chunks)), truncated };
}

/** Crude but dependency-free: models read text, not markup. */
export function htmlToText(html: string): string {
  return html
    .replace(/<(script|style|noscript)[^>]*>[\s\S]*?<\/\1>/gi, '')
    .replace(/<br\s*\/?>|<\/(p|div|li|h[1-6]|tr|section|article)>/gi, '\n')
    .replace(/<[^>]+>/g, '')
    .replace(/&nbsp;/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** How `web_fetch` returns an HTML page; other content types come back as they are. */
const WEB_FETCH_FORMATS = ['text', 'markdown', 'html'] as const;
export type WebFetchFormat = (typeof WEB_FETCH_FORMATS)[number];

let turndown: TurndownService | undefined;

/**
 * HTML to Markdown through turndown (ATX headings, fenced code, `-` bullets), without scripts and
 * styles. turndown (and the DOM it brings) is loaded on the first page converted, not at start.
 */
export async function htmlToMarkdown(html: string): Promise<string> {
  const { default: Turndown } = await import('turndown');
  turndown ??= new Turndown({
    headingStyle: 'atx',
    codeBlockStyle: 'fenced',
    bulletListMarker: '-',
  }).remove(['script', 'style', 'noscript']);
  return turndown.turndown(html).trim();
}

async function render(body: string, contentType: string, format: WebFetchFormat): Promise<string> {
  if (!/html/i.test(contentType)) return body;
  switch (format) {
    case 'text':
      return htmlToText(body);
    case 'markdown':
      return htmlToMarkdown(body);
    case 'html':
      return body;
  }
}

export function createWebFetchTool(options: WebFetchOptions = {}): RuntimeTool {
  const timeoutMs = options.timeoutMs ?? 15_000;
  const maxBytes = options.maxBytes ?? 1_000_000;
  const maxRedirects = options.maxRedirects ?? 5;
  const allowPrivateNetwork = options.allowPrivateNetwork ?? false;
  return defineTool({
    name: 'web_fetch',
    idempotent: true,
    description:
      'Fetch an http(s) URL. An HTML page comes back as plain text (format "text", the default), Markdown ("markdown": keeps headings, links, lists and code) or the raw HTML ("html"). Large pages are cut off.',
    schema: z.strictObject({
      url: z.string().min(1),
      format: z.enum(WEB_FETCH_FORMATS).optional(),
    }),
    async run({ url, format = 'text' }, ctx) {
      let current: URL;
      try {
        current = new URL(url);
      } catch {
        return { output: `Invalid URL: ${url}`, exitCode: 1 };
      }
      const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(timeoutMs)]);
      try {
        for (let hop = 0; ; hop += 1) {
          await checkUrl(current, allowPrivateNetwork);
          const response = await fetch(current, { redirect: 'manual', signal });
          const location = response.headers.get('location');
          if (response.status >= 300 && response.status < 400 && location !== null) {
            await response.body?.cancel();
            if (hop >= maxRedirects)
              return { output: `Too many redirects (> ${maxRedirects})`, exitCode: 1 };
            current = new URL(location, current);
            continue;
          }
          const { text, truncated } = await readCapped(response, maxBytes);
          const type = response.headers.get('content-type') ?? 'unknown';
          const body = await render(text, type, format);
          const header = `URL: ${current.href}\nStatus: ${response.status}\nContent-Type: ${type}\n\n`;
          const tail = truncated ? `\n[truncated at ${maxBytes} bytes]` : '';
          return { output: capOutput(header + body + tail), exitCode: response.ok ? 0 : 1 };
        }
      } catch (error) {
        if (ctx.signal.aborted) return { output: 'Aborted', exitCode: 130 };
        if (signal.aborted) return { output: `Timed out after ${timeoutMs} ms`, exitCode: 124 };
        const message = error instanceof Error ? error.message : String(error);
        return { output: `Fetch failed: ${message}`, exitCode: 1 };
      }
    },
  });
}
