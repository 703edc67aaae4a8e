import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router-dom';
import { Alert, Button, describedBy, Dialog, Field, Input, Textarea } from '@/components/ui';
import { errorMessage, fieldErrors } from '@/api/errors';
import { detectVariables } from '../api';
import { useCreatePrompt } from '../hooks/usePrompts';
import { VariableList } from './VariableList';

/** A new prompt with its version 1; opens the prompt's page once created. */
export function CreatePromptDialog({ projectId, open, onClose }: { projectId: number; open: boolean; onClose: () => void }) {
  const navigate = useNavigate();
  const create = useCreatePrompt(projectId);
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [template, setTemplate] = useState('');
  const [system, setSystem] = useState('');
  const [local, setLocal] = useState<Record<string, string>>({});

  function close() {
    setName('');
    setDescription('');
    setTemplate('');
    setSystem('');
    setLocal({});
    create.reset();
    onClose();
  }

  function onSubmit(e: FormEvent) {
    e.preventDefault();
    const problems: Record<string, string> = {};
    if (!name.trim()) problems.name = 'Enter a name.';
    if (!template.trim()) problems.template = 'Write the template (the user message).';
    setLocal(problems);
    if (Object.keys(problems).length) return;
    create.mutate(
      {
        name: name.trim(),
        template,
        ...(description.trim() ? { description: description.trim() } : {}),
        ...(system.trim() ? { system } : {}),
      },
      {
        onSuccess: (p) => {
          close();
          navigate(`/projects/${projectId}/prompts/${p.id}`);
        },
      },
    );
  }

  const server = fieldErrors(create.error);
  const err = (k: string) => local[k] ?? server[k] ?? null;
  const shown = Object.keys(server).some((k) => ['name', 'template', 'system', 'description'].includes(k));
  return (
    <Dialog open={open} onClose={close} title="New prompt" description="Version 1 of a template runs render for each case. Few-shots and tools can be added in the next version.">
      <form onSubmit={onSubmit} className="space-y-4" noValidate>
        {create.isError && !shown && <Alert>{errorMessage(create.error)}</Alert>}
        <Field id="prompt-name" label="Name" error={err('name')}>
          <Input id="prompt-name" value={name} onChange={(e) => setName(e.target.value)} invalid={!!err('name')} aria-describedby={describedBy('prompt-name', err('name'))} maxLength={100} data-autofocus />
        </Field>
        <Field id="prompt-description" label="Description (optional)" error={err('description')}>
          <Input id="prompt-description" value={description} onChange={(e) => setDescription(e.target.value)} maxLength={2000} />
        </Field>
        <Field id="prompt-template" label="Template" error={err('template')} hint="The user message. {{variable}} is filled from each case's input.">
          <Textarea
            id="prompt-template"
            value={template}
            onChange={(e) => setTemplate(e.target.value)}
            invalid={!!err('template')}
            aria-describedby={describedBy('prompt-template', err('template'), true)}
            className="font-mono"
          />
        </Field>
        <Field id="prompt-system" label="System text (optional)" error={err('system')}>
          <Textarea id="prompt-system" value={system} onChange={(e) => setSystem(e.target.value)} className="font-mono" />
        </Field>
        <VariableList variables={detectVariables(template, system)} />
        <div className="flex justify-end gap-2">
          <Button variant="secondary" onClick={close}>
            Cancel
          </Button>
          <Button type="submit" loading={create.isPending}>
            Create prompt
          </Button>
        </div>
      </form>
    </Dialog>
  );
}
