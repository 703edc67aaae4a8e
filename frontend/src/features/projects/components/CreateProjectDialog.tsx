import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router-dom';
import { Alert, Button, describedBy, Dialog, Field, Input, Textarea } from '@/components/ui';
import { errorMessage, fieldErrors } from '@/api/errors';
import { useCreateProject } from '../hooks/useProjects';

type Errors = Partial<Record<'name' | 'description', string>>;

const NAME_RE = /^[A-Za-z0-9 _-]+$/;

export function validateProject(name: string, description: string): Errors {
  const errors: Errors = {};
  const n = name.trim();
  if (!n) errors.name = 'Enter a project name.';
  else if (n.length > 100) errors.name = 'The name must be at most 100 characters.';
  else if (!NAME_RE.test(n)) errors.name = 'Use only letters, digits, spaces, hyphens and underscores.';
  else if (!/[A-Za-z0-9]/.test(n)) errors.name = 'The name needs at least one letter or digit.';
  if (description.length > 1000) errors.description = 'The description must be at most 1000 characters.';
  return errors;
}

export function CreateProjectDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const navigate = useNavigate();
  const create = useCreateProject();
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [submitted, setSubmitted] = useState(false);
  const [serverErrors, setServerErrors] = useState<Errors>({});
  const [formError, setFormError] = useState<string | null>(null);

  const errors: Errors = { ...serverErrors, ...(submitted ? validateProject(name, description) : {}) };

  function close() {
    setName('');
    setDescription('');
    setSubmitted(false);
    setServerErrors({});
    setFormError(null);
    create.reset();
    onClose();
  }

  function onSubmit(e: FormEvent) {
    e.preventDefault();
    setSubmitted(true);
    setServerErrors({});
    setFormError(null);
    if (Object.keys(validateProject(name, description)).length > 0) return;
    create.mutate(
      { name: name.trim(), description: description.trim() || null },
      {
        onSuccess: (project) => {
          close();
          navigate(`/projects/${project.id}`);
        },
        onError: (err) => {
          const fields = fieldErrors(err) as Errors;
          if (fields.name || fields.description) setServerErrors(fields);
          else setFormError(errorMessage(err));
        },
      },
    );
  }

  return (
    <Dialog open={open} onClose={close} title="New project" description="A project holds models, datasets and runs for a team.">
      <form noValidate onSubmit={onSubmit} className="space-y-4">
        {formError && <Alert>{formError}</Alert>}
        <Field id="project-name" label="Project name" error={errors.name} hint="Letters, digits, spaces, - and _ (up to 100).">
          <Input
            id="project-name"
            data-autofocus
            required
            maxLength={100}
            value={name}
            onChange={(e) => {
              setName(e.target.value);
              setServerErrors((s) => ({ ...s, name: undefined }));
            }}
            invalid={!!errors.name}
            aria-describedby={describedBy('project-name', errors.name, true)}
          />
        </Field>
        <Field id="project-description" label="Description (optional)" error={errors.description}>
          <Textarea
            id="project-description"
            value={description}
            onChange={(e) => setDescription(e.target.value)}
            invalid={!!errors.description}
            aria-describedby={describedBy('project-description', errors.description)}
          />
        </Field>
        <div className="flex justify-end gap-2 pt-2">
          <Button variant="secondary" onClick={close}>
            Cancel
          </Button>
          <Button type="submit" loading={create.isPending}>
            Create project
          </Button>
        </div>
      </form>
    </Dialog>
  );
}
