import { parseCommand } from './command';
import { SandboxError } from './errors';

describe('parseCommand', () => {
  const env = { HOME: '/home/agent', SPACED: 'a b' };

  test('splits with shell-style quoting', () => {
    expect(parseCommand(`grep -n "two words" 'single $HOME' plain\\ escaped`, env)).toEqual([
      'grep',
      '-n',
      'two words',
      'single $HOME',
      'plain escaped',
    ]);
  });

  test('every operator, substitution and glob is a literal argument', () => {
    expect(parseCommand('a; b && c || d | e & f > g < h', env)).toEqual([
      'a',
      ';',
      'b',
      '&&',
      'c',
      '||',
      'd',
      '|',
      'e',
      '&',
      'f',
      '>',
      'g',
      '<',
      'h',
    ]);
    expect(parseCommand('echo $(id) `id` *.ts #note', env)).toEqual([
      'echo',
      '$',
      '(',
      'id',
      ')',
      '`id`',
      '*.ts',
      '#note',
    ]);
  });

  test('variables expand from the given environment into single arguments', () => {
    expect(parseCommand('echo $HOME ${SPACED} "$SPACED!" $MISSING', env)).toEqual([
      'echo',
      '/home/agent',
      'a b',
      'a b!',
      '',
    ]);
  });

  test.each([
    ['', 'non-empty'],
    ['   ', 'non-empty'],
    ['echo ${}', 'cannot be parsed'],
    ['$MISSING ls', 'names no program'],
    ['echo \0', 'NUL'],
  ])('%j is INVALID_COMMAND', (command, message) => {
    let caught: unknown;
    try {
      parseCommand(command, env);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(SandboxError);
    expect(caught).toMatchObject({ code: 'INVALID_COMMAND', errorCode: 'VALIDATION_ERROR' });
    expect((caught as Error).message).toContain(message);
  });
});
