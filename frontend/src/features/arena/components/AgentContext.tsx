import type { Challenge } from '../types';

const summaryClass =
  'cursor-pointer rounded-xl px-1 text-sm font-medium text-zinc-900 focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-indigo-500';

/** The agent's persona and tool manifest (collapsible), and the contract that defines ground truth. */
export function AgentContext({ challenge }: { challenge: Challenge }) {
  const { system_prompt, tools, contract } = challenge.context;
  return (
    <div className="space-y-3">
      <details className="rounded-xl border border-zinc-200 p-3" data-testid="agent-context">
        <summary className={summaryClass}>Agent context: system prompt and {tools.length} tools</summary>
        <div className="mt-3 space-y-3">
          <section aria-label="System prompt">
            <h3 className="text-sm font-medium text-zinc-900">System prompt</h3>
            <pre className="mt-1 whitespace-pre-wrap break-words rounded-xl bg-zinc-50 p-3 font-mono text-sm text-zinc-800">{system_prompt}</pre>
          </section>
          <section aria-label="Tool manifest">
            <h3 className="text-sm font-medium text-zinc-900">Tools</h3>
            <ul className="mt-1 space-y-2">
              {tools.map((t) => (
                <li key={t.name} className="rounded-xl border border-zinc-200 p-3">
                  <p className="font-mono text-sm font-medium text-zinc-900">{t.name}</p>
                  {t.description && <p className="text-sm text-zinc-600">{t.description}</p>}
                  <details className="mt-1">
                    <summary className={summaryClass}>Schemas</summary>
                    <p className="mt-1 text-sm text-zinc-600">Input</p>
                    <pre className="overflow-x-auto rounded-xl bg-zinc-50 p-2 font-mono text-sm text-zinc-800">
                      {JSON.stringify(t.input_schema, null, 2)}
                    </pre>
                    {t.output_schema && (
                      <>
                        <p className="mt-1 text-sm text-zinc-600">Output</p>
                        <pre className="overflow-x-auto rounded-xl bg-zinc-50 p-2 font-mono text-sm text-zinc-800">
                          {JSON.stringify(t.output_schema, null, 2)}
                        </pre>
                      </>
                    )}
                  </details>
                </li>
              ))}
            </ul>
          </section>
        </div>
      </details>
      <section aria-labelledby="contract-heading" className="rounded-xl border border-zinc-200 p-3">
        <h3 id="contract-heading" className="text-sm font-medium text-zinc-900">
          Contract
        </h3>
        <ol className="mt-2 space-y-2">
          {contract.map((clause, i) => (
            <li key={i} className="flex gap-2 text-sm text-zinc-800">
              <span className="font-mono text-zinc-500">{i}</span>
              <span className={/^MUST NOT/i.test(clause) ? 'text-red-800' : undefined}>{clause}</span>
            </li>
          ))}
        </ol>
      </section>
    </div>
  );
}
