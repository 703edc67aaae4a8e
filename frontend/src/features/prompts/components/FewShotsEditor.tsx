import { Button, Textarea } from '@/components/ui';
import { MAX_FEW_SHOTS, type FewShot } from '../api';

/** Example input/output pairs, sent as user/assistant turns before each case. */
export function FewShotsEditor({ shots, onChange, error }: { shots: FewShot[]; onChange: (shots: FewShot[]) => void; error: string | null }) {
  const set = (i: number, patch: Partial<FewShot>) => onChange(shots.map((s, j) => (j === i ? { ...s, ...patch } : s)));
  return (
    <fieldset className="space-y-2" aria-describedby={error ? 'few-shots-error' : undefined}>
      <legend className="text-sm font-medium text-zinc-900">Few-shot examples ({shots.length})</legend>
      {shots.length === 0 && <p className="text-sm text-zinc-500">None. Examples are sent as user/assistant turns before each case.</p>}
      <ol className="space-y-3">
        {shots.map((s, i) => (
          <li key={i} className="space-y-2 rounded-xl border border-zinc-200 p-3">
            <div className="flex items-center justify-between gap-2">
              <span className="text-sm font-medium text-zinc-700">Example {i + 1}</span>
              <Button variant="ghost" size="sm" onClick={() => onChange(shots.filter((_, j) => j !== i))} aria-label={`Remove example ${i + 1}`}>
                Remove
              </Button>
            </div>
            <div className="grid gap-2 md:grid-cols-2">
              <div className="min-w-0 space-y-1">
                <label htmlFor={`shot-${i}-input`} className="text-sm text-zinc-700">
                  Input (user)
                </label>
                <Textarea id={`shot-${i}-input`} value={s.input} onChange={(e) => set(i, { input: e.target.value })} invalid={!!error && !s.input.trim()} maxLength={4000} />
              </div>
              <div className="min-w-0 space-y-1">
                <label htmlFor={`shot-${i}-output`} className="text-sm text-zinc-700">
                  Output (assistant)
                </label>
                <Textarea id={`shot-${i}-output`} value={s.output} onChange={(e) => set(i, { output: e.target.value })} invalid={!!error && !s.output.trim()} maxLength={4000} />
              </div>
            </div>
          </li>
        ))}
      </ol>
      {error && (
        <p id="few-shots-error" className="text-sm text-red-700">
          {error}
        </p>
      )}
      <Button variant="secondary" size="sm" disabled={shots.length >= MAX_FEW_SHOTS} onClick={() => onChange([...shots, { input: '', output: '' }])}>
        Add example
      </Button>
    </fieldset>
  );
}
