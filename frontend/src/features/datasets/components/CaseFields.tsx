import { Button, describedBy, Field, Input, Select, Textarea } from '@/components/ui';
import { DIFFICULTIES, type DatasetKind } from '../api';
import { errorsAt, type CaseDraft, type ChatRole, type DraftErrors } from './caseDraft';

const ROLES: ChatRole[] = ['system', 'user', 'assistant'];

/**
 * The fields of one case, per dataset kind: a question and its answer; template variables
 * (name = value) and the expected output; a conversation's messages with the ground truth
 * of each user turn; a trace as JSON. Errors show at their field. `n` makes ids unique when
 * several cases are open at once.
 */
export function CaseFields({ kind, n, draft, errors, onChange }: { kind: DatasetKind; n: number; draft: CaseDraft; errors: DraftErrors; onChange: (d: CaseDraft) => void }) {
  const id = (name: string) => `case-${n}-${name}`;
  const set = (patch: Partial<CaseDraft>) => onChange({ ...draft, ...patch });
  const at = (...p: string[]) => errorsAt(errors, ...p);
  const inputError = errors.input?.join('; ');

  return (
    <div className="space-y-4">
      {kind === 'questions' && (
        <>
          <Field id={id('question')} label="Question" error={at('input.question', 'input')}>
            <Textarea id={id('question')} className="min-h-20" value={draft.question} onChange={(e) => set({ question: e.target.value })} invalid={!!at('input.question', 'input')} aria-describedby={describedBy(id('question'), at('input.question', 'input'))} data-autofocus />
          </Field>
          <Field id={id('answer')} label="Expected answer (optional)" error={at('expected')} hint="The reference answer scorers compare replies with.">
            <Textarea id={id('answer')} value={draft.answer} onChange={(e) => set({ answer: e.target.value })} invalid={!!at('expected')} aria-describedby={describedBy(id('answer'), at('expected'), true)} />
          </Field>
        </>
      )}
      {kind === 'cases' && (
        <>
          <fieldset className="space-y-2" aria-describedby={inputError ? id('vars-error') : undefined}>
            <legend className="text-sm font-medium text-zinc-900">Variables</legend>
            {draft.variables.map((v, i) => {
              const error = at(`variables[${i}]`, `input.${v.name}`);
              const change = (patch: Partial<{ name: string; value: string }>) => set({ variables: draft.variables.map((x, j) => (j === i ? { ...x, ...patch } : x)) });
              return (
                <div key={i} className="space-y-1">
                  <div className="flex flex-wrap items-start gap-2">
                    <Input aria-label={`Variable ${i + 1} name`} placeholder="name" className="w-40 font-mono" value={v.name} onChange={(e) => change({ name: e.target.value })} invalid={!!error} />
                    <Textarea aria-label={`Variable ${i + 1} value`} placeholder="value" className="min-h-10 min-w-40 flex-1" value={v.value} onChange={(e) => change({ value: e.target.value })} invalid={!!error} />
                    <Button variant="ghost" size="sm" aria-label={`Remove variable ${i + 1}`} disabled={draft.variables.length === 1} onClick={() => set({ variables: draft.variables.filter((_, j) => j !== i) })}>
                      Remove
                    </Button>
                  </div>
                  {error && <p className="text-sm text-red-700">{error}</p>}
                </div>
              );
            })}
            {inputError && (
              <p id={id('vars-error')} className="text-sm text-red-700">
                {inputError}
              </p>
            )}
            <Button variant="secondary" size="sm" onClick={() => set({ variables: [...draft.variables, { name: '', value: '' }] })}>
              Add variable
            </Button>
          </fieldset>
          <Field id={id('output')} label="Expected output (optional)" error={at('expected')}>
            <Textarea id={id('output')} value={draft.output} onChange={(e) => set({ output: e.target.value })} invalid={!!at('expected')} aria-describedby={describedBy(id('output'), at('expected'))} />
          </Field>
        </>
      )}
      {kind === 'conversations' && <TurnsEditor n={n} draft={draft} errors={errors} onChange={onChange} />}
      {kind === 'traces' && (
        <Field id={id('trace')} label="Trace (JSON)" error={at('trace')} hint='{"messages": [...]} with roles system, user, assistant or tool; tool_calls and tool_call_id where they apply.'>
          <Textarea id={id('trace')} className="min-h-40 font-mono" value={draft.trace} onChange={(e) => set({ trace: e.target.value })} invalid={!!at('trace')} aria-describedby={describedBy(id('trace'), at('trace'), true)} />
        </Field>
      )}
      <div className="grid gap-4 sm:grid-cols-2">
        <Field id={id('tags')} label="Tags" hint="Separated by commas." error={at('tags')}>
          <Input id={id('tags')} value={draft.tags} onChange={(e) => set({ tags: e.target.value })} invalid={!!at('tags')} aria-describedby={describedBy(id('tags'), at('tags'), true)} />
        </Field>
        <Field id={id('difficulty')} label="Difficulty" error={at('difficulty')}>
          <Select id={id('difficulty')} className="w-full" value={draft.difficulty} onChange={(e) => set({ difficulty: e.target.value })}>
            <option value="">Not set</option>
            {DIFFICULTIES.map((d) => (
              <option key={d} value={d}>
                {d}
              </option>
            ))}
          </Select>
        </Field>
      </div>
    </div>
  );
}

/** A conversation: messages in order; each user turn carries the answer it should get. */
function TurnsEditor({ n, draft, errors, onChange }: { n: number; draft: CaseDraft; errors: DraftErrors; onChange: (d: CaseDraft) => void }) {
  const messages = draft.messages;
  const change = (i: number, patch: Partial<CaseDraft['messages'][number]>) => onChange({ ...draft, messages: messages.map((m, j) => (j === i ? { ...m, ...patch } : m)) });
  // Errors of the conversation as a whole (not of one message or turn).
  const whole = ['input', 'input.messages', 'expected', 'expected.turns'].flatMap((f) => errors[f] ?? []).join('; ');
  let turn = -1;
  return (
    <fieldset className="space-y-3">
      <legend className="text-sm font-medium text-zinc-900">Turns</legend>
      {messages.map((m, i) => {
        if (m.role === 'user') turn++;
        const contentError = errorsAt(errors, `input.messages[${i}]`);
        const truthError = m.role === 'user' ? errorsAt(errors, `expected.turns[${turn}]`) : undefined;
        const label = m.role === 'user' ? `Turn ${turn + 1}` : m.role === 'system' ? 'System' : 'Assistant';
        return (
          <div key={i} className="space-y-2 rounded-xl border border-zinc-200 p-3" role="group" aria-label={`Message ${i + 1}`}>
            <div className="flex flex-wrap items-center gap-2">
              <Select aria-label={`Message ${i + 1} role`} value={m.role} onChange={(e) => change(i, { role: e.target.value as ChatRole })}>
                {ROLES.map((r) => (
                  <option key={r} value={r}>
                    {r}
                  </option>
                ))}
              </Select>
              <span className="text-sm text-zinc-600">{label}</span>
              <Button variant="ghost" size="sm" className="ml-auto" aria-label={`Remove message ${i + 1}`} disabled={messages.length === 1} onClick={() => onChange({ ...draft, messages: messages.filter((_, j) => j !== i) })}>
                Remove
              </Button>
            </div>
            <Textarea aria-label={`Message ${i + 1} text`} className="min-h-16" value={m.content} onChange={(e) => change(i, { content: e.target.value })} invalid={!!contentError} />
            {contentError && <p className="text-sm text-red-700">{contentError}</p>}
            {m.role === 'user' && (
              <>
                <Textarea aria-label={`Turn ${turn + 1} ground truth`} placeholder="The answer this turn should get" className="min-h-10" value={m.truth} onChange={(e) => change(i, { truth: e.target.value })} invalid={!!truthError} />
                {truthError && <p className="text-sm text-red-700">{truthError}</p>}
              </>
            )}
          </div>
        );
      })}
      {whole && (
        <p id={`case-${n}-turns-error`} className="text-sm text-red-700">
          {whole}
        </p>
      )}
      <div className="flex flex-wrap gap-2">
        <Button variant="secondary" size="sm" onClick={() => onChange({ ...draft, messages: [...messages, { role: 'assistant', content: '', truth: '' }, { role: 'user', content: '', truth: '' }] })}>
          Add turn
        </Button>
      </div>
    </fieldset>
  );
}
