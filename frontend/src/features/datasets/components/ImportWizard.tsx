import { useState, type FormEvent } from 'react';
import { Alert, Button, Dialog, Field, Input, Label, Select, Table, TBody, TD, TH, THead, TR } from '@/components/ui';
import { errorMessage, fieldErrors, isApiError } from '@/api/errors';
import { importFormat, rowErrors, variableName, type ColumnRole, type DatasetKind, type ImportMapping, type ImportPreview, type RowError } from '../api';
import { useImport, useImportPreview } from '../hooks/useDatasets';

const MAX_BYTES = 10 * 1024 * 1024;
const ROLES: Array<{ value: ColumnRole; label: string }> = [
  { value: 'variable', label: 'Variable (input)' },
  { value: 'expected', label: 'Expected output' },
  { value: 'tags', label: 'Tags' },
  { value: 'difficulty', label: 'Difficulty' },
  { value: 'metadata', label: 'Metadata (JSON)' },
  { value: 'ignore', label: 'Ignore' },
];

/** A first guess at each column's role from its name. */
export function guessRole(column: string): ColumnRole {
  const c = column.trim().toLowerCase();
  if (['expected', 'expected_output', 'answer', 'output', 'ground_truth', 'reference'].includes(c)) return 'expected';
  if (c === 'tags' || c === 'tag') return 'tags';
  if (c === 'difficulty') return 'difficulty';
  if (c === 'metadata') return 'metadata';
  if (c === 'id') return 'ignore';
  return 'variable';
}

export function toMapping(roles: Record<string, ColumnRole>, names: Record<string, string> = {}): ImportMapping {
  const entries = Object.entries(roles);
  const one = (role: ColumnRole) => entries.find(([, r]) => r === role)?.[0] ?? null;
  return {
    variables: Object.fromEntries(entries.filter(([, r]) => r === 'variable').map(([c]) => [c, (names[c] ?? '').trim() || variableName(c)])),
    expected: one('expected'),
    tags: one('tags'),
    difficulty: one('difficulty'),
    metadata: one('metadata'),
  };
}

function doneMessage(v: unknown): string {
  const r = (v ?? {}) as Record<string, unknown>;
  const parts: string[] = [];
  if (typeof r.case_count === 'number') parts.push(` The dataset now has ${r.case_count.toLocaleString('en-US')} case${r.case_count === 1 ? '' : 's'}`);
  const num = typeof r.number === 'number' ? r.number : null;
  if (num !== null) parts.push(`${parts.length ? '' : ' Now'} in version ${num}`);
  return `Imported.${parts.join('')}${parts.length ? '.' : ''}`;
}

const cell = (v: unknown) => (v === null || v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v));

/** Upload a CSV or JSONL file, preview its first rows, map its columns, import. */
export function ImportWizard({
  projectId,
  datasetId,
  kind,
  open,
  onClose,
}: {
  projectId: number;
  datasetId: number;
  kind?: DatasetKind;
  open: boolean;
  onClose: () => void;
}) {
  const preview = useImportPreview(projectId, datasetId);
  const commit = useImport(projectId, datasetId);
  const [file, setFile] = useState<File | null>(null);
  const [fileError, setFileError] = useState<string | null>(null);
  const [data, setData] = useState<ImportPreview | null>(null);
  const [roles, setRoles] = useState<Record<string, ColumnRole>>({});
  const [names, setNames] = useState<Record<string, string>>({});
  const [mappingError, setMappingError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);

  function reset() {
    setFile(null);
    setFileError(null);
    setData(null);
    setRoles({});
    setNames({});
    setMappingError(null);
    setDone(null);
    preview.reset();
    commit.reset();
  }

  function close() {
    reset();
    onClose();
  }

  function onFile(f: File | null) {
    setFile(f);
    setData(null);
    setFileError(null);
    commit.reset();
    preview.reset();
    if (!f) return;
    if (!importFormat(f.name)) {
      setFileError('Choose a .csv or .jsonl file.');
      return;
    }
    if (f.size > MAX_BYTES) {
      setFileError('The file is larger than 10 MB.');
      return;
    }
    preview.mutate(f, {
      onSuccess: (p) => {
        setData(p);
        const guessed = Object.fromEntries(p.columns.map((c) => [c, guessRole(c)]));
        setRoles(guessed);
        // A questions dataset has one variable, `question`: the first input column is it.
        const firstVariable = p.columns.find((c) => guessed[c] === 'variable');
        setNames(Object.fromEntries(p.columns.map((c) => [c, kind === 'questions' && c === firstVariable ? 'question' : variableName(c)])));
      },
    });
  }

  function onSubmit(e: FormEvent) {
    e.preventDefault();
    if (!file || !data) return;
    if (native) {
      setMappingError(null);
      commit.mutate({ file, mapping: null }, { onSuccess: (v) => setDone(doneMessage(v)) });
      return;
    }
    const mapping = toMapping(roles, names);
    const dupes = (['expected', 'tags', 'difficulty', 'metadata'] as const).filter((r) => Object.values(roles).filter((x) => x === r).length > 1);
    if (dupes.length) {
      setMappingError(`Map only one column to ${dupes.join(', ')}.`);
      return;
    }
    if (Object.keys(mapping.variables).length === 0) {
      setMappingError('Map at least one column to a variable.');
      return;
    }
    setMappingError(null);
    commit.mutate({ file, mapping }, { onSuccess: (v) => setDone(doneMessage(v)) });
  }

  const errors: RowError[] = commit.isError && isApiError(commit.error) ? rowErrors(commit.error.errors) : [];
  const totalRowErrors = commit.isError && isApiError(commit.error) && typeof commit.error.errors.row_error_count === 'number' ? commit.error.errors.row_error_count : errors.length;
  const otherErrors = Object.entries(fieldErrors(commit.error)).filter(([k]) => !k.startsWith('rows') && k !== 'row_error_count');
  // JSONL rows that already are Assay cases ({input, expected, ...}) need no mapping.
  const native = data?.format === 'jsonl' && data.columns.includes('input');

  return (
    <Dialog open={open} onClose={close} title="Import cases" size="wide" description="CSV with a header row, or JSONL (one JSON object a line); up to 10 MB and 10,000 rows. Every row is checked before anything is written.">
      {done ? (
        <div className="space-y-4">
          <Alert tone="success">{done}</Alert>
          <div className="flex justify-end">
            <Button onClick={close}>Done</Button>
          </div>
        </div>
      ) : (
        <form onSubmit={onSubmit} className="space-y-4" noValidate>
          <Field id="import-file" label="File" error={fileError}>
            <input
              id="import-file"
              type="file"
              accept=".csv,.jsonl,.ndjson,text/csv,application/jsonl"
              onChange={(e) => onFile(e.target.files?.[0] ?? null)}
              className="block w-full text-sm file:mr-3 file:h-10 file:rounded-xl file:border file:border-zinc-200 file:bg-white file:px-4 file:text-sm file:font-medium focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-indigo-500"
              aria-invalid={!!fileError || undefined}
              aria-describedby={fileError ? 'import-file-error' : undefined}
            />
          </Field>
          {preview.isPending && <p role="status" className="text-sm text-zinc-600">Reading the file…</p>}
          {preview.isError && <Alert>{errorMessage(preview.error)}</Alert>}
          {data && (
            <>
              <section aria-labelledby="import-preview-heading" className="space-y-2">
                <h3 id="import-preview-heading" className="text-base font-semibold">
                  Preview (first {data.rows.length} of {data.total_rows.toLocaleString('en-US')} rows)
                </h3>
                <div className="max-h-64 overflow-auto">
                  <Table aria-label="Import preview">
                    <THead>
                      <TR>
                        <TH>Row</TH>
                        {data.columns.map((c) => (
                          <TH key={c}>{c}</TH>
                        ))}
                      </TR>
                    </THead>
                    <TBody>
                      {data.rows.map((r, i) => (
                        <TR key={i}>
                          {/* the number row errors use: the file line the row starts on */}
                          <TD className="tabular-nums text-zinc-500">{data.row_numbers?.[i] ?? i + 1}</TD>
                          {data.columns.map((c) => (
                            <TD key={c} className="max-w-48 truncate">
                              {cell(r[c])}
                            </TD>
                          ))}
                        </TR>
                      ))}
                    </TBody>
                  </Table>
                </div>
              </section>
              {native ? (
                <p className="text-sm text-zinc-600">These rows are Assay cases ({'{input, expected, tags, difficulty, metadata}'}): they are imported as they are.</p>
              ) : (
              <fieldset className="space-y-2">
                <legend className="text-base font-semibold">Map columns</legend>
                <div className="grid gap-3">
                  {data.columns.map((c) => (
                    // wraps at 390 px: the variable's name goes under its column, not past the edge
                    <div key={c} className="flex flex-wrap items-center gap-2">
                      <Label htmlFor={`map-${c}`} className="w-32 truncate" title={c}>
                        {c}
                      </Label>
                      <Select
                        id={`map-${c}`}
                        className="w-48 min-w-0 flex-1 sm:flex-none"
                        value={roles[c] ?? 'ignore'}
                        onChange={(e) => setRoles((r) => ({ ...r, [c]: e.target.value as ColumnRole }))}
                      >
                        {ROLES.map((r) => (
                          <option key={r.value} value={r.value}>
                            {r.label}
                          </option>
                        ))}
                      </Select>
                      {roles[c] === 'variable' && (
                        <Input
                          aria-label={`Variable name for ${c}`}
                          className="min-w-[8rem] flex-1"
                          value={names[c] ?? ''}
                          onChange={(e) => setNames((n) => ({ ...n, [c]: e.target.value }))}
                        />
                      )}
                    </div>
                  ))}
                </div>
              </fieldset>
              )}
            </>
          )}
          {mappingError && <Alert>{mappingError}</Alert>}
          {commit.isError && (
            <div role="alert" className="space-y-2 rounded-xl border border-red-200 bg-red-50 p-3 text-sm text-red-800" data-testid="import-errors">
              <p className="font-medium">{errors.length ? 'Nothing was imported: fix these rows and try again.' : errorMessage(commit.error)}</p>
              {errors.length === 0 && otherErrors.length > 0 && (
                <ul className="list-disc space-y-1 pl-5">
                  {otherErrors.map(([k, v]) => (
                    <li key={k}>
                      {k.replace(/^mapping\./, 'Mapping, ')}: {v}
                    </li>
                  ))}
                </ul>
              )}
              {errors.length > 0 && (
                <ul className="max-h-48 list-disc space-y-1 overflow-auto pl-5">
                  {errors.map((er, i) => (
                    <li key={i}>
                      Row {er.row}
                      {er.field ? `, ${er.field}` : ''}: {er.reason}
                    </li>
                  ))}
                </ul>
              )}
              {totalRowErrors > errors.length && <p>…and {(totalRowErrors - errors.length).toLocaleString('en-US')} more.</p>}
            </div>
          )}
          <div className="flex justify-end gap-2">
            <Button variant="secondary" onClick={close}>
              Cancel
            </Button>
            <Button type="submit" disabled={!data} loading={commit.isPending}>
              Import
            </Button>
          </div>
        </form>
      )}
    </Dialog>
  );
}
