import type { ExecutionBackend } from '@cognition/sandbox';

/** Python module names: dotted identifiers (no shell or path characters). */
const MODULE_NAME = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;

/**
 * Run by `python3` inside the session's sandbox: imports the module and reports its version
 * (installed distribution, else `__version__`), file, and public top-level members with their
 * kinds, as JSON on stdout. Importing runs the module's own code — in the sandbox, as any code
 * the agent runs there.
 */
const SCRIPT = String.raw`
import importlib, inspect, json, sys
name = sys.argv[1]
try:
    module = importlib.import_module(name)
except Exception as error:
    print(json.dumps({"error": f"{type(error).__name__}: {error}"}))
    sys.exit(0)
version = None
try:
    from importlib import metadata
    version = metadata.version(name.split(".")[0])
except Exception:
    version = getattr(module, "__version__", None)
names = getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]
members = []
for member_name in sorted(set(names)):
    value = getattr(module, member_name, None)
    if inspect.isclass(value): kind = "class"
    elif inspect.isfunction(value) or inspect.isbuiltin(value): kind = "function"
    elif inspect.ismodule(value): kind = "module"
    else: kind = "variable"
    members.append({"name": member_name, "kind": kind})
print(json.dumps({"version": version if isinstance(version, str) else None,
                  "file": getattr(module, "__file__", None), "exports": members}))
`;

export interface PythonPackageReport {
  ecosystem: 'python';
  name: string;
  version: string | null;
  file: string | null;
  exports: { name: string; kind: 'class' | 'function' | 'module' | 'variable' }[];
}

export class PythonInspectError extends Error {}

/** Inspects a Python module with `python3` in the session's sandbox. */
export async function inspectPythonPackage(
  name: string,
  backend: ExecutionBackend,
  signal: AbortSignal,
): Promise<PythonPackageReport> {
  if (!MODULE_NAME.test(name))
    throw new PythonInspectError(`"${name}" is not a Python module name`);
  const probe = await backend.execute('python3 --version', { signal });
  if (probe.exitCode !== 0) {
    throw new PythonInspectError(
      `python3 is not available in this session's sandbox (${backend.kind}), so Python packages cannot be inspected`,
    );
  }
  const quoted = `'${SCRIPT.replace(/'/g, `'"'"'`)}'`;
  const result = await backend.execute(`python3 -c ${quoted} ${name}`, { signal });
  let parsed: { error?: string; version?: string | null; file?: string | null; exports?: unknown };
  try {
    parsed = JSON.parse(result.output.trim().split('\n').at(-1) ?? '') as typeof parsed;
  } catch {
    throw new PythonInspectError(
      `python3 could not inspect "${name}" (exit ${result.exitCode}): ${result.output.slice(0, 500)}`,
    );
  }
  if (parsed.error) {
    throw new PythonInspectError(`Python module "${name}" cannot be imported: ${parsed.error}`);
  }
  return {
    ecosystem: 'python',
    name,
    version: parsed.version ?? null,
    file: parsed.file ?? null,
    exports: (parsed.exports ?? []) as PythonPackageReport['exports'],
  };
}
