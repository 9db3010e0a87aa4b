import type { Metadata } from 'next';
import { openApiDocument } from '@/lib/openapi/document';

export const metadata: Metadata = { title: 'API' };

type Media = { schema?: unknown; examples?: Record<string, { value: unknown }> };
type Operation = {
  operationId: string;
  summary: string;
  tags: string[];
  security?: Record<string, string[]>[];
  parameters?: { name: string; in: string; required: boolean }[];
  requestBody?: { content: Record<string, Media> };
  responses: Record<string, { description: string; content?: Record<string, Media> }>;
};

/**
 * The OpenAPI document (/api/v1/openapi.json) as a page: every operation by tag, its scope, its
 * parameters, its request schema and example, and each answer's status. Rendered on the server
 * from the same document, with no script (the CSP and an offline machine allow no CDN viewer).
 */
export default function ApiDocsPage() {
  const document = openApiDocument() as {
    info: { description: string };
    tags: { name: string; description: string }[];
    paths: Record<string, Record<string, Operation>>;
  };
  const operations = Object.entries(document.paths).flatMap(([path, item]) => Object.entries(item).map(([method, operation]) => ({ path, method, operation })));
  return (
    <>
      <div className="page-head">
        <div>
          <h1>API</h1>
          <p>
            {document.info.description} The machine-readable document: <a href="/api/v1/openapi.json">/api/v1/openapi.json</a> (OpenAPI 3.1); a typed client is
            in lib/api-client/.
          </p>
        </div>
      </div>
      {document.tags.map((tag) => (
        <section key={tag.name} className="card" data-testid="api-tag">
          <h2>{tag.name}</h2>
          <p>{tag.description}</p>
          {operations
            .filter(({ operation }) => operation.tags.includes(tag.name))
            .map(({ path, method, operation }) => {
              const request = Object.entries(operation.requestBody?.content ?? {})[0];
              const scopes = operation.security?.flatMap((requirement) => Object.values(requirement).flat()) ?? [];
              return (
                <details key={operation.operationId} id={operation.operationId} data-testid="api-operation">
                  <summary>
                    <code>
                      {method.toUpperCase()} {path}
                    </code>{' '}
                    {operation.summary}
                  </summary>
                  {scopes.length > 0 ? <p>Scope: {scopes.join(', ')}</p> : null}
                  {operation.parameters?.length ? (
                    <p>
                      Parameters:{' '}
                      {operation.parameters.map((parameter) => `${parameter.name} (${parameter.in}${parameter.required ? ', required' : ''})`).join('; ')}
                    </p>
                  ) : null}
                  {request ? (
                    <>
                      <h3>Request ({request[0]})</h3>
                      <pre>{JSON.stringify(request[1].schema, null, 2)}</pre>
                      {Object.values(request[1].examples ?? {}).map((example, index) => (
                        <pre key={index}>{JSON.stringify(example.value, null, 2)}</pre>
                      ))}
                    </>
                  ) : null}
                  <h3>Answers</h3>
                  <table>
                    <tbody>
                      {Object.entries(operation.responses).map(([status, answer]) => (
                        <tr key={status}>
                          <td>{status}</td>
                          <td>{answer.description}</td>
                          <td>{Object.keys(answer.content ?? {}).join(', ')}</td>
                          <td>
                            {Object.values(answer.content ?? {}).flatMap((media) =>
                              Object.values(media.examples ?? {}).map((example, index) => <pre key={index}>{JSON.stringify(example.value, null, 2)}</pre>),
                            )}
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </details>
              );
            })}
        </section>
      ))}
    </>
  );
}
