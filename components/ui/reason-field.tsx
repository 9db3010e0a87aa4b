/** The reason an operator gives for a change: required, and written to the audit log with it. */
export function ReasonField({
  id,
  testId,
  value,
  onChange,
  placeholder,
}: {
  id: string;
  testId: string;
  value: string;
  onChange: (value: string) => void;
  placeholder: string;
}) {
  return (
    <div className="field">
      <label htmlFor={id}>Reason (required, goes to the audit log)</label>
      <textarea id={id} value={value} onChange={(event) => onChange(event.target.value)} placeholder={placeholder} data-testid={testId} />
    </div>
  );
}
