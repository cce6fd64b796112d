import { z } from 'zod';
import type { RuntimeTool } from '../types';
import { capOutput, defineTool } from '../types';
import { PackageLookupError, inspectNpmPackage } from './npm-package';
import { PythonInspectError, inspectPythonPackage } from './python-package';

export interface InspectPackageOptions {
  /**
   * Looked in after the session's own workspace (`<root>/node_modules`): the server's
   * workspace root, where packages shared by every session can be installed. Absent: only the
   * session's workspace.
   */
  workspaceRoot?: string;
}

/**
 * `inspect_package {name, ecosystem?}`: what a package offers, for an agent about to use it.
 * npm (the default): version, entry points and exported names with their kinds, read from the
 * package's declaration file (TypeScript compiler API) in the session's workspace, then the
 * server's workspace root. python: the same through `inspect`, run by python3 inside the
 * session's sandbox. A missing package is a tool error the model reads, never a crash.
 */
export function createInspectPackageTool(options: InspectPackageOptions = {}): RuntimeTool {
  return defineTool({
    name: 'inspect_package',
    idempotent: true,
    description:
      'List what an installed package offers: its version, entry points and exported names with their kinds (function, class, interface, type, const…). ecosystem "npm" (default) reads a package from node_modules of the workspace; "python" imports a module with python3 in the sandbox.',
    schema: z.strictObject({
      name: z.string().min(1).max(214),
      ecosystem: z.enum(['npm', 'python']).optional(),
    }),
    async run({ name, ecosystem = 'npm' }, ctx) {
      try {
        const backend = await ctx.backend();
        const report =
          ecosystem === 'python'
            ? await inspectPythonPackage(name, backend, ctx.signal)
            : await inspectNpmPackage(name, [
                { path: backend.root, label: '.' },
                ...(options.workspaceRoot
                  ? [{ path: options.workspaceRoot, label: '<workspace root>' }]
                  : []),
              ]);
        return { output: capOutput(JSON.stringify(report, null, 2)), exitCode: 0 };
      } catch (error) {
        if (error instanceof PackageLookupError || error instanceof PythonInspectError) {
          return { output: error.message, exitCode: 1 };
        }
        const reason = error instanceof Error ? error.message : String(error);
        return {
          output: `Could not inspect ${ecosystem} package "${name}": ${reason}`,
          exitCode: 1,
        };
      }
    },
  });
}
