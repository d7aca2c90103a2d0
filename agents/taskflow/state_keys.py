"""Session-state keys of a taskflow run (each value is the JSON of a schema in schemas.py).

The human's answers are not copied here: each is the function response of its pause, stored
as an event of the run (`{"answer"}` or `HumanDecision`), and read back by the step rules.
"""

PLAN = "taskflow_plan"  # WorkflowPlan (with the run id the exactly-once key derives from)
STEP = "taskflow_step"  # Step: where the run is
DETAILS = "taskflow_details"  # TaskDetails collected so far
CRITIQUE = "taskflow_critique"  # Critique: the critic's last verdict
DETAIL_ROUNDS = "taskflow_detail_rounds"  # how many times the critic judged the details
CLASSIFICATION = "taskflow_classification"  # Classification: the classifier's last proposal
CLASSIFICATION_ROUNDS = "taskflow_classification_rounds"  # proposals made so far
REVIEW = "taskflow_review"  # ExpertReview
RESULT = "taskflow_result"  # WrittenTask, once written

# What one run produces; a new run starts with all of them cleared.
RUN_OUTPUTS = (
    DETAILS,
    CRITIQUE,
    DETAIL_ROUNDS,
    CLASSIFICATION,
    CLASSIFICATION_ROUNDS,
    REVIEW,
    RESULT,
)
