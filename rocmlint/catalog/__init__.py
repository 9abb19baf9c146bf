"""The check catalog: the check files (`checks/`, one YAML file per check), loaded and
validated (`loader`), their documentation (`docs`), and the AMD GPU facts checks ask about
(`arch_facts`, from the public target table `rocmlint.targets`)."""
