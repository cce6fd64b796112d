#!/usr/bin/env node
// The structure of the workspace as its imports draw it: projects and the arrows between them,
// and, inside each project, import cycles between files and between folders. `--check` fails
// (exit 1) on any cycle, on a number of docs/architecture.md's table that no longer matches, and
// on an import running up the runtime's floors (its README's Layout block), so the maps cannot
// rot silently; the boundary rules between projects are ESLint's (@nx/enforce-module-boundaries).
//
// Imports are read with TypeScript's own pre-processor (static, dynamic and type-only imports
// alike: a type-only cycle still ties two files together for a reader). Spec files are left
// out; test helpers (src/testing/) are code and count.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SOURCE = /\.(ts|tsx|mts)$/;
const SPEC = /\.spec\.(ts|tsx|mts)$|\.d\.ts$/;

/** Every Nx project of the workspace with a source root: name, tags, root and source root. */
function projects() {
  const found = [];
  for (const group of ['apps', 'libs', 'tools']) {
    for (const dir of fs.readdirSync(path.join(root, group))) {
      const file = path.join(root, group, dir, 'project.json');
      if (!fs.existsSync(file)) continue;
      const project = JSON.parse(fs.readFileSync(file, 'utf8'));
      const sourceRoot = path.join(root, project.sourceRoot ?? path.join(group, dir, 'src'));
      if (fs.existsSync(sourceRoot)) {
        found.push({ name: project.name, tags: project.tags ?? [], sourceRoot });
      }
    }
  }
  return found;
}

/** The project's own source files: a folder holding another project (tools/bench) is its. */
function sourceFiles(dir) {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'generated') continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!fs.existsSync(path.join(full, 'project.json'))) out.push(...sourceFiles(full));
    } else if (SOURCE.test(entry.name) && !SPEC.test(entry.name)) out.push(full);
  }
  return out;
}

function resolveRelative(from, specifier) {
  const base = path.resolve(path.dirname(from), specifier);
  const stem = base.replace(/\.(m?js)$/, '');
  for (const candidate of [
    base,
    `${stem}.ts`,
    `${stem}.tsx`,
    `${stem}.mts`,
    path.join(base, 'index.ts'),
    path.join(base, 'index.tsx'),
  ]) {
    if (SOURCE.test(candidate) && fs.existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** Strongly connected components of more than one node (Tarjan), each sorted. */
function cycles(graph) {
  let index = 0;
  const stack = [];
  const state = new Map();
  const found = [];
  const visit = (node) => {
    const entry = { index, low: index, onStack: true };
    index += 1;
    state.set(node, entry);
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      const seen = state.get(next);
      if (!seen) {
        visit(next);
        entry.low = Math.min(entry.low, state.get(next).low);
      } else if (seen.onStack) {
        entry.low = Math.min(entry.low, seen.index);
      }
    }
    if (entry.low === entry.index) {
      const component = [];
      let member;
      do {
        member = stack.pop();
        state.get(member).onStack = false;
        component.push(member);
      } while (member !== node);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!state.has(node)) visit(node);
  return found;
}

export function measure() {
  const all = projects();
  const byAlias = new Map(all.map((p) => [`@cognition/${p.name}`, p.name]));
  const arrows = new Set();
  const testArrows = new Set();
  const fileCycles = [];
  const folderCycles = [];
  let files = 0;
  for (const project of all) {
    const fileGraph = new Map();
    const folderGraph = new Map();
    const folderOf = (file) => path.relative(project.sourceRoot, path.dirname(file)) || '.';
    for (const file of sourceFiles(project.sourceRoot)) {
      files += 1;
      const info = ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true);
      const targets = new Set();
      for (const { fileName } of info.importedFiles) {
        if (fileName.startsWith('.')) {
          const target = resolveRelative(file, fileName);
          if (target && target.startsWith(project.sourceRoot)) targets.add(target);
        } else {
          // `@cognition/x/testing` and its sub-entries (`@cognition/runtime/testing/http`) are x's.
          const other = byAlias.get(fileName.replace(/\/testing(\/.*)?$/, ''));
          // Test helpers may compose implementations (ESLint allows it): counted apart.
          const into = file.includes(`${path.sep}testing${path.sep}`) ? testArrows : arrows;
          if (other && other !== project.name) into.add(`${project.name} -> ${other}`);
        }
      }
      fileGraph.set(file, targets);
      const folder = folderOf(file);
      const folderTargets = folderGraph.get(folder) ?? new Set();
      for (const target of targets) {
        const targetFolder = folderOf(target);
        // A file may import its own folder's siblings and its sub-folders' files freely: a
        // folder is read as one floor holding what lies below it.
        if (targetFolder !== folder && !isInside(targetFolder, folder)) {
          folderTargets.add(targetFolder);
        }
      }
      folderGraph.set(folder, folderTargets);
    }
    const relative = (file) => path.relative(root, file);
    for (const cycle of cycles(fileGraph)) fileCycles.push(cycle.map(relative));
    for (const cycle of cycles(folderGraph)) {
      folderCycles.push(
        cycle.map((folder) => relative(path.join(project.sourceRoot, folder)) + '/'),
      );
    }
  }
  return {
    projects: all.length,
    files,
    arrows: [...arrows].sort(),
    testArrows: [...testArrows].filter((arrow) => !arrows.has(arrow)).sort(),
    fileCycles,
    folderCycles,
  };
}

/**
 * The floors a project's README draws (the first column of its "## Layout" code block, top to
 * bottom; `a, b` on one line share a floor) and every import between top-level entries of its
 * source root that runs up them, so the map stays true. An entry missing from the map is
 * reported too.
 */
export function floorsCheck(readme, sourceRoot) {
  const text = fs.readFileSync(path.join(root, readme), 'utf8');
  const block = text.split('## Layout')[1]?.split('```')[1] ?? '';
  const floorOf = new Map();
  let floor = 0;
  for (const line of block.split('\n')) {
    const names = line.split(/\s{2,}/)[0].trim();
    if (names === '' || /^\s/.test(line)) continue;
    for (const name of names.split(',')) floorOf.set(name.trim().replace(/\/$/, ''), floor);
    floor += 1;
  }
  const sourceDir = path.join(root, sourceRoot);
  const topOf = (file) => path.relative(sourceDir, file).split(path.sep)[0];
  const problems = [];
  for (const entry of fs.readdirSync(sourceDir)) {
    const isSource = SOURCE.test(entry) && !SPEC.test(entry);
    const isFolder = fs.statSync(path.join(sourceDir, entry)).isDirectory();
    if ((isSource || isFolder) && !floorOf.has(entry)) {
      problems.push(`${sourceRoot}/${entry} is not on the map of ${readme}`);
    }
  }
  for (const file of sourceFiles(sourceDir)) {
    const from = topOf(file);
    for (const { fileName } of ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true)
      .importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const target = resolveRelative(file, fileName);
      if (!target || !target.startsWith(sourceDir)) continue;
      const to = topOf(target);
      if (floorOf.has(from) && floorOf.has(to) && floorOf.get(to) < floorOf.get(from)) {
        problems.push(`${path.relative(root, file)} imports ${to} above it (${readme})`);
      }
    }
  }
  return problems;
}

/**
 * The numbers docs/architecture.md states ("The shape in numbers") against the measured ones;
 * returns the rows that differ.
 */
export function documentedNumbers(result) {
  const text = fs.readFileSync(path.join(root, 'docs/architecture.md'), 'utf8');
  const row = (label) => text.match(new RegExp(`^\\|\\s*${label}\\s*\\|\\s*([^|]*)\\|`, 'm'))?.[1];
  const expected = [
    ['projects', `${result.projects} `],
    ['arrows between projects', `${result.arrows.length}, plus ${result.testArrows.length} `],
    ['import cycles between files', `${result.fileCycles.length} `],
    ['import cycles between folders of one project', `${result.folderCycles.length}`],
  ];
  const problems = [];
  for (const [label, start] of expected) {
    const stated = row(label);
    if (stated === undefined || !stated.startsWith(start)) {
      problems.push(
        `docs/architecture.md says "${label}: ${stated?.trim() ?? '(no row)'}", measured: ${start.trim()}`,
      );
    }
  }
  return problems;
}

function isInside(folder, parent) {
  return parent === '.' || folder.startsWith(`${parent}/`);
}

const isMain = process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  const result = measure();
  const check = process.argv.includes('--check');
  console.log(
    `${result.projects} projects, ${result.files} source files (specs left out), ` +
      `${result.arrows.length} arrows between projects ` +
      `(+${result.testArrows.length} from test helpers only), ` +
      `${result.fileCycles.length} file import cycles, ${result.folderCycles.length} folder cycles`,
  );
  if (process.argv.includes('--arrows')) {
    for (const arrow of result.arrows) console.log(`  ${arrow}`);
    for (const arrow of result.testArrows) console.log(`  ${arrow} (test helpers)`);
  }
  for (const cycle of result.fileCycles) console.log(`file cycle: ${cycle.join(' <-> ')}`);
  for (const cycle of result.folderCycles) console.log(`folder cycle: ${cycle.join(' <-> ')}`);
  if (check && (result.fileCycles.length > 0 || result.folderCycles.length > 0)) {
    console.error(
      'imports: cycles found (see above); break them by moving what both sides share lower',
    );
    process.exit(1);
  }
  if (check) {
    const problems = [
      ...documentedNumbers(result),
      ...floorsCheck('libs/runtime/README.md', 'libs/runtime/src'),
    ];
    for (const problem of problems) console.error(`imports: ${problem}`);
    if (problems.length > 0) process.exit(1);
  }
}
