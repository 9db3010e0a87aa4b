import type { Table } from '@/lib/api/console/reports';

/** The report's tables; the CSV export is built from exactly these cells. */
export function ReportTables({ tables }: { tables: Table[] }) {
  return (
    <>
      {tables.map((table) => (
        <section className="card report-section" key={table.title} data-testid={`report-${table.title.toLowerCase().replace(/\W+/g, '-')}`}>
          <h2>{table.title}</h2>
          <div className="table-wrap">
            <table className="report-table">
              <thead>
                <tr>
                  {table.header.map((cell, index) => (
                    <th key={cell} className={index >= (table.labelColumns ?? 2) ? 'num' : undefined}>
                      {cell}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {table.rows.map((row, rowIndex) => (
                  <tr key={rowIndex} className={row[0] === 'Total' ? 'report-total' : undefined}>
                    {row.map((cell, index) => (
                      <td key={index} className={index >= (table.labelColumns ?? 2) ? 'num' : undefined} data-column={table.header[index]}>
                        {cell}
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {table.rows.length === 0 ? <p className="muted">Nothing in this range.</p> : null}
        </section>
      ))}
    </>
  );
}
