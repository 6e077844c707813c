"""The course's model: how a chapter is written (contract: headings, callouts, exercises, metadata) and how its
Chinese prose is punctuated. Read by the course tools (coursetools) and the site builder (sitebuild); the
verification harness (verify) never imports it, so editing it re-runs no notebook."""
