import type { Criterion } from './draft';

export interface AssistOption {
  title: string;
  text: string;
  extra?: Record<string, unknown>;
}

const obj = (v: unknown): Record<string, unknown> => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

/** Text options from an assist answer: {options:[{title,text}]}, {prompts:[{name,text,systemText}]}, {text} or a string. */
export function assistOptions(result: unknown): AssistOption[] {
  if (typeof result === 'string') return [{ title: 'Suggestion', text: result }];
  const r = obj(result);
  const list = Array.isArray(r.options) ? r.options : Array.isArray(r.prompts) ? r.prompts : null;
  if (list) {
    return list
      .map((x, i) => {
        const o = obj(x);
        const text = typeof o.text === 'string' ? o.text : '';
        const title = typeof o.title === 'string' ? o.title : typeof o.name === 'string' ? o.name : `Option ${i + 1}`;
        const system = o.system_text ?? o.systemText;
        const extra: Record<string, unknown> = {};
        if (typeof system === 'string') extra.system_text = system;
        if (typeof o.rationale === 'string') extra.rationale = o.rationale;
        return { title, text, extra };
      })
      .filter((o) => o.text);
  }
  for (const k of ['text', 'objective', 'prompt', 'improved']) if (typeof r[k] === 'string') return [{ title: 'Suggestion', text: r[k] as string }];
  return [];
}

/** Criteria from a "draft rubric" answer ({criteria:[{name, description, weight, scale:{min,max}}]}). */
export function assistCriteria(result: unknown): Criterion[] {
  const list = obj(result).criteria;
  if (!Array.isArray(list)) return [];
  return list.map((x) => {
    const o = obj(x);
    const s = obj(o.scale);
    return {
      name: typeof o.name === 'string' ? o.name : '',
      description: typeof o.description === 'string' ? o.description : '',
      weight: typeof o.weight === 'number' ? o.weight : 0,
      scale_min: typeof s.min === 'number' ? s.min : 0,
      scale_max: typeof s.max === 'number' ? s.max : 5,
    };
  });
}
