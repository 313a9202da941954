"""flarekit: run distributed ML on Kubernetes (Ray, Kueue, AppWrapper, JobSet, Kubeflow Trainer).

The typed models live in the generated package ``flarekit_models``; this
package holds the handwritten clients, the test emulator
(:mod:`flarekit.testing`) and, later, the user-facing facade.
"""

__all__: list[str] = []
