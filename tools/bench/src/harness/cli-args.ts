export const USAGE = `Usage: npm run bench -- [options]

  --smoke            tiny sizes (about a minute); results are printed, docs are not written
  --only 5,6         run only these benchmarks (numbers of docs/benchmarks.md, or names: fuzz)
  --docs PATH        write the results to PATH (default: docs/benchmarks.md on full runs)
  --no-docs          do not write any docs
  --profile DIR      spawned servers write V8 CPU profiles to DIR; the run prints their hot spots
  --minutes N        how long the soak runs (default 30; e.g. --only soak --minutes 10)
  --help             this text
`;

/** A benchmark's number in docs/benchmarks.md, or its name (`Benchmark.name`). */
export type BenchmarkSelector = number | string;

export interface BenchArgs {
  smoke: boolean;
  /** Benchmark ids (or names, e.g. `fuzz`) to run; undefined runs every registered one. */
  only: BenchmarkSelector[] | undefined;
  /** Where to write the results; undefined writes nothing. */
  docsPath: string | undefined;
  profileDir: string | undefined;
  /** `--minutes`: the soak's length; undefined: its default. */
  minutes: number | undefined;
  help: boolean;
}

/** A command-line problem, naming the option. */
export class BenchArgsError extends Error {
  override readonly name = 'BenchArgsError';
  constructor(
    readonly option: string,
    message: string,
  ) {
    super(`${option}: ${message}`);
  }
}

/**
 * Parses the options after `npm run bench --`. `defaultDocsPath` is used on full runs unless
 * `--no-docs` or `--docs` says otherwise; smoke runs write docs only to an explicit `--docs`.
 */
export function parseBenchArgs(argv: readonly string[], defaultDocsPath: string): BenchArgs {
  let smoke = false;
  let only: BenchmarkSelector[] | undefined;
  let docs: string | undefined;
  let noDocs = false;
  let profileDir: string | undefined;
  let minutes: number | undefined;
  let help = false;

  for (let i = 0; i < argv.length; i += 1) {
    const raw = argv[i] as string;
    const eq = raw.indexOf('=');
    const option = raw.startsWith('--') && eq !== -1 ? raw.slice(0, eq) : raw;
    const inline = raw.startsWith('--') && eq !== -1 ? raw.slice(eq + 1) : undefined;
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (v === undefined || v === '' || (inline === undefined && v.startsWith('--'))) {
        throw new BenchArgsError(option, 'needs a value');
      }
      return v;
    };
    switch (option) {
      case '--smoke':
        smoke = true;
        break;
      case '--only':
        only = parseIds(value());
        break;
      case '--docs':
        docs = value();
        break;
      case '--no-docs':
        noDocs = true;
        break;
      case '--profile':
        profileDir = value();
        break;
      case '--minutes': {
        const text = value();
        minutes = Number(text);
        if (!Number.isFinite(minutes) || minutes <= 0 || minutes > 24 * 60) {
          throw new BenchArgsError(option, `expected minutes between 0 and 1440, got "${text}"`);
        }
        break;
      }
      case '--help':
      case '-h':
        help = true;
        break;
      default:
        throw new BenchArgsError(option, 'unknown option (see --help)');
    }
  }
  if (noDocs && docs !== undefined) {
    throw new BenchArgsError('--no-docs', 'cannot be combined with --docs');
  }
  const docsPath = noDocs ? undefined : (docs ?? (smoke ? undefined : defaultDocsPath));
  return { smoke, only, docsPath, profileDir, minutes, help };
}

function parseIds(text: string): BenchmarkSelector[] {
  const ids = text.split(',').map((part) => part.trim());
  const numbers = new Set<number>();
  const names = new Set<string>();
  for (const id of ids) {
    if (/^\d+$/.test(id)) numbers.add(Number(id));
    // Names are words (`fuzz`, `multi-node`), so a stray letter is still a typo.
    else if (/^[a-z][a-z0-9-]+$/.test(id)) names.add(id);
    else {
      throw new BenchArgsError(
        '--only',
        `expected benchmark numbers or names such as 5,6 or fuzz, got "${text}"`,
      );
    }
  }
  return [...[...numbers].sort((a, b) => a - b), ...names];
}
