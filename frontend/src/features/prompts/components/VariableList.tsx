/** The variables found in the text, as the server will store them; live while typing. */
export function VariableList({ variables }: { variables: string[] }) {
  return (
    <div className="space-y-1" aria-live="polite">
      <p className="text-sm font-medium text-zinc-900" id="prompt-variables-label">
        Variables
      </p>
      {variables.length === 0 ? (
        <p className="text-sm text-zinc-500">None: write {'{{name}}'} to fill a value from each case.</p>
      ) : (
        <ul aria-labelledby="prompt-variables-label" className="flex flex-wrap gap-2">
          {variables.map((v) => (
            <li key={v} className="rounded-xl border border-indigo-200 bg-indigo-50 px-2 py-0.5 font-mono text-sm text-indigo-800">
              {v}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
