"""The script of the CrewAI tests' crew (tests/adapters/crew_process.py), shared
with the test that checks what the crew left in the service."""

CREW = "Billing crew"
FACT = "Dana wants her invoices as PDF files every Monday."
TASKS = {
    "learn": ("Find out how Dana would like to receive her invoices.", "How Dana receives her invoices"),
    "use": ("Prepare the weekly paperwork that goes to our client.", "The paperwork, ready to send"),
}
ANSWERS = {
    "learn": f"Dana told us: {FACT}",
    "use": "The paperwork is ready.",
}
# A query by meaning for the crew's memory: no word of it is in FACT.
QUERY = "which document format does the customer prefer for billing?"
