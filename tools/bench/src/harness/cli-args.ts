export const USAGE = `Usage: npm run bench -- [options]

  --smoke            tiny sizes (about a minute); results are printed, docs are not written
  --only 5,6         run only these benchmarks (numbers of docs/benchmarks.md)
  --docs PATH        write the results to PATH (default: docs/benchmarks.md on full runs)
  --no-docs          do not write any docs
  --profile DIR      spawned servers write V8 CPU profiles to DIR; the run prints their hot spots
  --help             this text
`;

export interface BenchArgs {
  smoke: boolean;
  /** Benchmark ids to run; undefined runs every registered one. */
  only: number[] | undefined;
  /** Where to write the results; undefined writes nothing. */
  docsPath: string | undefined;
  profileDir: string | undefined;
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
  let only: number[] | undefined;
  let docs: string | undefined;
  let noDocs = false;
  let profileDir: string | undefined;
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
  return { smoke, only, docsPath, profileDir, help };
}

function parseIds(text: string): number[] {
  const ids = text.split(',').map((part) => part.trim());
  const parsed = ids.map((id) => {
    if (!/^\d+$/.test(id)) {
      throw new BenchArgsError('--only', `expected benchmark numbers such as 5,6, got "${text}"`);
    }
    return Number(id);
  });
  return [...new Set(parsed)].sort((a, b) => a - b);
}
