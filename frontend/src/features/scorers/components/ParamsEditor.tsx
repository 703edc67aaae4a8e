import type { ReactNode } from 'react';
import { Button } from '@/components/ui';
import type { Params, ScorerKind } from '../hooks/useScorers';
import { asRubric, starterRubric } from '../rubric';
import { errorFor, type JsonSchema } from '../schema';
import { JudgePicker } from './JudgePicker';
import { RubricBuilder } from './RubricBuilder';
import { RulesEditor, RULES_EXAMPLE, type RuleProblem } from './RulesEditor';
import { SchemaForm } from './SchemaForm';

/** Params a new scorer of `kind` starts with: the schema's defaults, plus a starting rubric or rules. */
export function starterParams(kind: ScorerKind): Params {
  const schema = kind.params_schema as JsonSchema;
  const out: Params = {};
  for (const [name, prop] of Object.entries(schema.properties ?? {})) {
    if (prop.default !== undefined) out[name] = structuredClone(prop.default);
  }
  const rubric = schema.properties?.rubric;
  if (rubric?.type === 'object' && schema.required?.includes('rubric')) out.rubric = starterRubric();
  if (kind.kind === 'rules') out.yaml = RULES_EXAMPLE;
  return out;
}

interface ParamsEditorProps {
  projectId: number;
  kind: ScorerKind;
  value: Params;
  onChange: (next: Params) => void;
  errors: Record<string, string>;
  problems: RuleProblem[];
  disabled?: boolean;
}

/** The generic schema form, with specialised editors for rubrics, judge models and rules. */
export function ParamsEditor({ projectId, kind, value, onChange, errors, problems, disabled }: ParamsEditorProps) {
  const schema = kind.params_schema as JsonSchema;
  const props = schema.properties ?? {};
  const set = (name: string, next: unknown) => {
    const copy = { ...value };
    if (next === undefined) delete copy[name];
    else copy[name] = next;
    onChange(copy);
  };
  const custom: Record<string, ReactNode> = {};
  const hidden: string[] = [];

  if (props.judges) {
    custom.judges = (
      <JudgePicker
        projectId={projectId}
        value={Array.isArray(value.judges) ? value.judges.map(String) : []}
        onChange={(next) => set('judges', next.length ? next : undefined)}
        error={errorFor(errors, 'judges')}
        disabled={disabled}
      />
    );
  }
  if (props.rubric?.type === 'object') {
    const rubric = asRubric(value.rubric);
    const optional = !schema.required?.includes('rubric');
    custom.rubric = rubric ? (
      <div className="space-y-2">
        <RubricBuilder value={rubric} onChange={(next) => set('rubric', next)} errors={errors} disabled={disabled} />
        {optional && (
          <Button variant="ghost" size="sm" disabled={disabled} onClick={() => set('rubric', undefined)}>
            Remove the rubric
          </Button>
        )}
      </div>
    ) : (
      <div className="space-y-1">
        <p className="text-sm text-zinc-600">No rubric: the judges decide which response is better overall.</p>
        <Button variant="secondary" size="sm" disabled={disabled} onClick={() => set('rubric', starterRubric())}>
          Add a rubric
        </Button>
      </div>
    );
  }
  if (kind.kind === 'rules') {
    custom.yaml = (
      <RulesEditor
        value={typeof value.yaml === 'string' ? value.yaml : ''}
        onChange={(text) => set('yaml', text)}
        problems={problems}
        error={problems.length ? undefined : errorFor(errors, 'yaml')}
        disabled={disabled}
      />
    );
  }
  if (kind.kind === 'manual' && value.scale !== 'criteria') hidden.push('criteria');

  return (
    <SchemaForm
      key={kind.kind}
      schema={schema}
      value={value}
      onChange={onChange}
      errors={errors}
      custom={custom}
      hidden={hidden}
      disabled={disabled}
    />
  );
}
