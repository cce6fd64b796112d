import type { Todo } from '@cognition/contracts';
import { TodoSchema } from '@cognition/contracts';
import { z } from 'zod';
import { defineTool } from './types';

export const writeTodosTool = defineTool({
  name: 'write_todos',
  idempotent: true,
  description:
    'Replace your plan with this list of todos (each pending, in_progress or completed). Call it again to update statuses as you progress.',
  schema: z.strictObject({ todos: z.array(TodoSchema).max(100) }),
  run({ todos }, ctx) {
    ctx.emit({ type: 'planning', todos });
    // A step is complete when an item becomes completed that was not completed before.
    const before = new Set(ctx.todos.filter((t) => t.status === 'completed').map((t) => t.content));
    todos.forEach((todo: Todo, index) => {
      if (todo.status === 'completed' && !before.has(todo.content)) {
        ctx.emit({
          type: 'step_complete',
          step_number: index + 1,
          total_steps: todos.length,
          description: todo.content,
        });
      }
    });
    const done = todos.filter((t) => t.status === 'completed').length;
    return Promise.resolve({
      output: `Plan updated: ${done}/${todos.length} completed`,
      exitCode: 0,
      todos,
    });
  },
});

export const taskTool = defineTool({
  name: 'task',
  idempotent: false,
  description:
    'Delegate a self-contained task to a subagent and get its final answer back. The subagent does not see this conversation: describe the task fully.',
  schema: z.strictObject({
    agent: z.string().min(1).describe('Name of the subagent'),
    description: z.string().min(1).describe('The complete task for the subagent'),
  }),
  async run({ agent, description }, ctx) {
    return ctx.delegate(agent, description);
  },
});
